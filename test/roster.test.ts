// Sessions and their roster (endpoints 9, 10, 13, 14, 16, 17, 19 and 4): init, open (attach,
// never copy), blank tabs saved on first edit, focus and close, changed_since_seen, history with
// editor actions, and the cross-session memory note.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Body, createSavedDocument, jsonCall } from "./support/documents-client.js";
import { startStackWithKey } from "./support/file-stack.js";
import type { TestStack } from "./support/stack.js";

let stack: TestStack;
let key: string;

beforeAll(async () => {
  ({ stack, key } = await startStackWithKey({ name: "roster" }, "rosa"));
});
afterAll(() => stack?.close());

const ids = (body: Body) => body.documents.map((d: Body) => d.durable_document_id);

describe("sessions init and open", () => {
  it("mints an id, returns a fresh empty session; another owner's same id is its own session", async () => {
    const fresh = await jsonCall(stack, "POST", "/v1/sessions/init", key, {});
    expect(fresh.status).toBe(200);
    expect(fresh.body.session_id).toMatch(/^[a-zA-Z0-9_\-.]+$/);
    expect(fresh.body).toMatchObject({ documents: [], created: true });
    expect(fresh.body).not.toHaveProperty("focused_document_id");

    const mine = await jsonCall(stack, "POST", "/v1/sessions/init", key, { session_id: "rosa.chosen-1" });
    expect(mine.body).toMatchObject({ session_id: "rosa.chosen-1", created: true });
    const again = await jsonCall(stack, "POST", "/v1/sessions/init", key, { session_id: "rosa.chosen-1" });
    expect(again.body.created).toBe(false);
    // Ids are scoped per owner: no 403 that would reveal the id is taken.
    const other = await stack.createKey("mallory");
    const theirs = await jsonCall(stack, "POST", "/v1/sessions/init", other, { session_id: "rosa.chosen-1" });
    expect(theirs.body).toMatchObject({ session_id: "rosa.chosen-1", created: true });
    expect((await jsonCall(stack, "POST", "/v1/sessions/init", key, { session_id: "bad id!" })).status).toBe(422);
  });

  it("attaches saved documents without copying; the first listed is focused; either id form works", async () => {
    const a = await createSavedDocument(stack, key, "<h1>Alpha</h1><p>a</p>");
    const b = await createSavedDocument(stack, key, "<h1>Beta</h1><p>b</p>");
    const init = await jsonCall(stack, "POST", "/v1/sessions/init?include_html=true", key, {
      document_ids: [b.documentId, a.documentId],
    });
    expect(init.status).toBe(200);
    expect(ids(init.body)).toEqual([b.documentId, a.documentId]);
    expect(init.body.documents[0]).toMatchObject({ focused: true, title: "Beta", chunk_count: 2, section_count: 1 });
    expect(init.body.documents[0].html).toBe(b.html);
    const sid = init.body.session_id;

    // Re-opening by slot id focuses it without a new slot; the Files list has no copies.
    const slotA = init.body.documents[1].document_id;
    const reopened = await jsonCall(stack, "POST", `/v1/sessions/${sid}/documents/open`, key, {
      document_ids: [slotA],
    });
    expect(ids(reopened.body)).toEqual([a.documentId, b.documentId]);
    const files = await jsonCall(stack, "GET", "/v1/documents?limit=200", key);
    expect(files.body.documents.filter((d: Body) => [a.documentId, b.documentId].includes(d.document_id))).toHaveLength(
      2,
    );
    expect(files.body.documents.find((d: Body) => d.document_id === a.documentId).session_count).toBe(2);

    const missing = await jsonCall(stack, "POST", `/v1/sessions/${sid}/documents/open`, key, {
      document_ids: ["00000000-0000-4000-8000-000000000000"],
    });
    expect(missing.status).toBe(404);
    expect(
      (await jsonCall(stack, "POST", `/v1/sessions/${sid}/documents/open`, key, { document_ids: [] })).status,
    ).toBe(422);
  });
});

describe("blank tabs, focus, close", () => {
  it("opens a blank focused tab that gets a durable id on its first save", async () => {
    const { sessionId, documentId } = await createSavedDocument(stack, key, "<p>First</p>");
    const blank = await jsonCall(stack, "POST", `/v1/sessions/${sessionId}/documents/blank`, key);
    expect(blank.status).toBe(200);
    expect(blank.body.document).toMatchObject({ durable_document_id: null, focused: true, chunk_count: 0 });
    const slot = blank.body.document.document_id;
    expect(ids(blank.body)).toEqual([null, documentId]);

    const saved = await jsonCall(stack, "POST", `/v1/sessions/${sessionId}/documents/${slot}/save`, key, {
      html: "<h1>Notes</h1><p>Typed by hand.</p>",
    });
    expect(saved.status).toBe(200);
    expect(saved.body.created).toBe(true);
    const list = await jsonCall(stack, "GET", `/v1/sessions/${sessionId}/documents`, key);
    expect(list.body.documents[0]).toMatchObject({
      document_id: slot,
      durable_document_id: saved.body.durable_document_id,
      title: "Notes",
      focused: true,
    });
  });

  it("drafts into a blank tab through chat and binds the tab", async () => {
    const init = await jsonCall(stack, "POST", "/v1/sessions/init", key, {});
    const sid = init.body.session_id;
    const blank = await jsonCall(stack, "POST", `/v1/sessions/${sid}/documents/blank`, key);
    const chat = await jsonCall(stack, "POST", "/v1/chat", key, {
      session_id: sid,
      message: 'draft an outline for "Q3 launch plan"',
    });
    expect(chat.status).toBe(200);
    const list = await jsonCall(stack, "GET", `/v1/sessions/${sid}/documents`, key);
    expect(list.body.documents).toHaveLength(1);
    expect(list.body.documents[0].document_id).toBe(blank.body.document.document_id);
    expect(list.body.documents[0].durable_document_id).toBe(chat.body.document_changes.document_id);
  });

  it("focuses (returning the HTML), reports changes made elsewhere, and closes with next_focus", async () => {
    const a = await createSavedDocument(stack, key, "<h1>A</h1><p>a</p>");
    const b = await createSavedDocument(stack, key, "<h1>B</h1><p>b</p>");
    const c = await createSavedDocument(stack, key, "<h1>C</h1><p>c</p>");
    const init = await jsonCall(stack, "POST", "/v1/sessions/init", key, {
      document_ids: [a.documentId, b.documentId, c.documentId],
    });
    const sid = init.body.session_id;

    const focus = await jsonCall(stack, "POST", `/v1/sessions/${sid}/documents/${b.documentId}/focus`, key);
    expect(focus.status).toBe(200);
    expect(focus.body.html).toBe(b.html);
    expect(focus.body.document.durable_document_id).toBe(b.documentId);
    expect(focus.body.documents[0].durable_document_id).toBe(b.documentId);

    // Another session saves C: this session sees changed_since_seen on C only.
    await jsonCall(stack, "POST", `/v1/sessions/${c.sessionId}/documents/${c.slotId}/save`, key, {
      html: c.html.replace(">c<", ">c, edited<"),
    });
    const changed = await jsonCall(stack, "GET", `/v1/sessions/${sid}/documents?report_changed=true`, key);
    const flags = Object.fromEntries(
      changed.body.documents.map((d: Body) => [d.durable_document_id, d.changed_since_seen]),
    );
    expect(flags).toEqual({ [a.documentId]: false, [b.documentId]: false, [c.documentId]: true });
    const plain = await jsonCall(stack, "GET", `/v1/sessions/${sid}/documents`, key);
    expect(plain.body.documents[0]).not.toHaveProperty("changed_since_seen");

    const closed = await jsonCall(
      stack,
      "DELETE",
      `/v1/sessions/${sid}/documents/${b.documentId}?next_focus=${c.documentId}`,
      key,
    );
    expect(closed.status).toBe(200);
    expect(closed.body.focused_document_id).toBe(
      closed.body.documents.find((d: Body) => d.durable_document_id === c.documentId).document_id,
    );
    expect(closed.body.html).toContain("c, edited");
    expect(ids(closed.body)).toEqual([c.documentId, a.documentId]);
    // Persisted: a fresh read shows the same roster.
    expect(ids((await jsonCall(stack, "GET", `/v1/sessions/${sid}/documents`, key)).body)).toEqual([
      c.documentId,
      a.documentId,
    ]);

    await jsonCall(stack, "DELETE", `/v1/sessions/${sid}/documents/${c.documentId}`, key);
    const last = await jsonCall(stack, "DELETE", `/v1/sessions/${sid}/documents/${a.documentId}`, key);
    expect(last.body).toMatchObject({ documents: [] });
    expect(last.body).not.toHaveProperty("focused_document_id");
    expect(last.body).not.toHaveProperty("html");
    expect((await jsonCall(stack, "DELETE", `/v1/sessions/${sid}/documents/${a.documentId}`, key)).status).toBe(404);
  });
});

describe("history and memory", () => {
  it("returns turn indexes, the focused document and recorded editor actions", async () => {
    const doc = await createSavedDocument(stack, key, "<h1>Styled</h1><p>Body text.</p>");
    const chunk = /data-chunk-id="([^"]+)"[^>]*>Body/.exec(doc.html)?.[1] ?? "";
    await jsonCall(stack, "POST", `/v1/sessions/${doc.sessionId}/documents/${doc.slotId}/save`, key, {
      html: doc.html.replace("<p ", '<p style="text-align: center" '),
      editor_actions: [{ action: "alignment", value: "center", chunk_ids: [chunk] }],
    });
    const recorded = await jsonCall(stack, "POST", `/v1/sessions/${doc.sessionId}/editor-actions`, key, {
      actions: [
        { action: "font", value: "Georgia 12pt", chunk_ids: [chunk] },
        { action: "color", value: "#aa0000", details: { target: "text" } },
      ],
    });
    expect(recorded.status).toBe(200);
    await jsonCall(stack, "POST", "/v1/chat", key, {
      session_id: doc.sessionId,
      message: 'replace "Body" with "Main"',
    });

    const history = await jsonCall(
      stack,
      "GET",
      `/v1/sessions/${doc.sessionId}/history?focus_document_id=${doc.documentId}`,
      key,
    );
    expect(history.status).toBe(200);
    expect(history.body.messages.map((m: Body) => [m.sender, m.turn_index])).toEqual([
      ["user", 0],
      ["ai", 0],
    ]);
    expect(history.body.document_state.durable_document_id).toBe(doc.documentId);
    expect(history.body.document_state.html_content).toContain("Main text.");
    expect(history.body.document_state.html_content).toContain(`data-chunk-id="${chunk}"`);
    expect(history.body.editor_actions.map((a: Body) => [a.action, a.value])).toEqual([
      ["alignment", "center"],
      ["font", "Georgia 12pt"],
      ["color", "#aa0000"],
    ]);
    expect(history.body.editor_actions[0]).toMatchObject({ document_id: doc.slotId, chunk_ids: [chunk] });
    expect(history.body.editor_actions[2].details).toEqual({ target: "text" });
  });

  it("restoring with focus_document_id also moves the session's focus to that document", async () => {
    const a = await createSavedDocument(stack, key, "<h1>Alpha</h1><p>a</p>");
    const b = await createSavedDocument(stack, key, "<h1>Beta</h1><p>b</p>");
    const init = await jsonCall(stack, "POST", "/v1/sessions/init", key, {
      document_ids: [b.documentId, a.documentId],
    });
    const sid = init.body.session_id;
    const history = await jsonCall(stack, "GET", `/v1/sessions/${sid}/history?focus_document_id=${a.documentId}`, key);
    expect(history.status).toBe(200);
    expect(history.body.document_state.durable_document_id).toBe(a.documentId);
    const roster = await jsonCall(stack, "GET", `/v1/sessions/${sid}/documents`, key);
    expect(roster.body.documents.find((d: Body) => d.focused).durable_document_id).toBe(a.documentId);
    // A focus_document_id that is not open changes nothing.
    const unknown = await jsonCall(stack, "GET", `/v1/sessions/${sid}/history?focus_document_id=nope`, key);
    expect(unknown.body.document_state.durable_document_id).toBe(a.documentId);
  });

  it("keeps memory notes per account and per key; DELETE reports removed and is idempotent", async () => {
    const k = await stack.createKey("memo");
    const doc = "<p>Acme pays.</p>";
    await jsonCall(stack, "POST", "/v1/chat", k, { message: 'replace "Acme" with "Globex"', document_html: doc });
    await jsonCall(stack, "POST", "/v1/chat", k, {
      message: 'replace "Acme" with "Initech"',
      document_html: doc,
      cross_session_memory_key: "customer-7",
    });
    const byKey = await jsonCall(stack, "DELETE", "/v1/users/me/cross-session-memory?memory_key=customer-7", k);
    expect(byKey.body).toEqual({ removed: 1, memory_key: "customer-7" });
    expect(
      (await jsonCall(stack, "DELETE", "/v1/users/me/cross-session-memory?memory_key=customer-7", k)).body.removed,
    ).toBe(0);
    // Another account's DELETE removes nothing of this one's.
    expect((await jsonCall(stack, "DELETE", "/v1/users/me/cross-session-memory", key)).status).toBe(200);
    const account = await jsonCall(stack, "DELETE", "/v1/users/me/cross-session-memory", k);
    expect(account.body).toEqual({ removed: 1 });
    expect((await jsonCall(stack, "DELETE", "/v1/users/me/cross-session-memory", k)).body.removed).toBe(0);
  });
});
