// The archive state table of interface-spec "States and transitions / Saved document", row by
// row: each row arranges its state, performs the trigger and checks the next state and the
// other effects. A 2xx to archive always means the document is archived (Errors rule 10).
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Body, createSavedDocument, jsonCall } from "./support/documents-client.js";
import { startStackWithKey } from "./support/file-stack.js";
import type { TestStack } from "./support/stack.js";

let stack: TestStack;
let key: string;

beforeAll(async () => {
  ({ stack, key } = await startStackWithKey({ name: "archive" }, "arthur"));
});
afterAll(() => stack?.close());

/** A document open in its own session, and optionally in `others` more sessions. */
async function arrange(others: number, archived = false) {
  const doc = await createSavedDocument(stack, key, `<h1>Doc ${randomUUID()}</h1><p>Text.</p>`);
  const otherSessions: string[] = [];
  for (let i = 0; i < others; i++) {
    const init = await jsonCall(stack, "POST", "/v1/sessions/init", key, { document_ids: [doc.documentId] });
    otherSessions.push(init.body.session_id);
  }
  if (archived) {
    const res = await jsonCall(stack, "DELETE", `/v1/documents/${doc.documentId}?force=true`, key);
    expect(res.status).toBe(200);
  }
  return { ...doc, otherSessions };
}

async function state(documentId: string): Promise<"active" | "archived"> {
  const res = await jsonCall(stack, "GET", `/v1/documents/${documentId}`, key);
  expect(res.status).toBe(200);
  return res.body.status;
}

async function listed(documentId: string, archived: boolean): Promise<boolean> {
  const res = await jsonCall(stack, "GET", `/v1/documents?limit=200&archived=${archived}`, key);
  return res.body.documents.some((d: Body) => d.document_id === documentId);
}

async function roster(sessionId: string): Promise<string[]> {
  const res = await jsonCall(stack, "GET", `/v1/sessions/${sessionId}/documents`, key);
  return res.body.documents.map((d: Body) => d.durable_document_id);
}

interface Row {
  name: string;
  from: "active" | "archived";
  /** Sessions holding the document besides its own. */
  others: number;
  trigger: (doc: Awaited<ReturnType<typeof arrange>>) => Promise<{ status: number; body: Body }>;
  status: number;
  next: "active" | "archived";
  effects?: (doc: Awaited<ReturnType<typeof arrange>>, res: { status: number; body: Body }) => Promise<void>;
}

const rows: Row[] = [
  {
    name: "active → archived: DELETE, open only in the caller's session (from_session)",
    from: "active",
    others: 0,
    trigger: (d) => jsonCall(stack, "DELETE", `/v1/documents/${d.documentId}?from_session=${d.sessionId}`, key),
    status: 200,
    next: "archived",
    effects: async (d, res) => {
      expect(res.body).toMatchObject({ status: "archived", archived: true, already_archived: false });
      expect(await listed(d.documentId, false)).toBe(false);
      expect(await listed(d.documentId, true)).toBe(true);
    },
  },
  {
    name: "archived → archived: DELETE of an archived document archives nothing → 409 already_archived",
    from: "archived",
    others: 0,
    trigger: (d) => jsonCall(stack, "DELETE", `/v1/documents/${d.documentId}?force=true`, key),
    status: 409,
    next: "archived",
    effects: async (d, res) => {
      expect(res.body.code).toBe("already_archived");
      expect(res.body.detail).toMatch(/already archived/);
      expect(await listed(d.documentId, true)).toBe(true);
    },
  },
  {
    name: "active → archived: DELETE with force=true while open elsewhere; every session unlinked and notified",
    from: "active",
    others: 2,
    trigger: (d) =>
      jsonCall(stack, "DELETE", `/v1/documents/${d.documentId}?force=true&from_session=${d.sessionId}`, key),
    status: 200,
    next: "archived",
    effects: async (d, res) => {
      expect(res.body.unlinked_sessions).toBe(3);
      for (const sid of [d.sessionId, ...d.otherSessions]) expect(await roster(sid)).not.toContain(d.documentId);
      for (const sid of d.otherSessions) {
        const events = await jsonCall(stack, "GET", `/v1/sessions/${sid}/doc-events`, key);
        expect(events.body.events.at(-1)).toMatchObject({ document_id: d.documentId, change: "archived" });
      }
    },
  },
  {
    name: "active → active: DELETE while open in another session without force → 409 document_in_use",
    from: "active",
    others: 2,
    trigger: (d) => jsonCall(stack, "DELETE", `/v1/documents/${d.documentId}?from_session=${d.sessionId}`, key),
    status: 409,
    next: "active",
    effects: async (d, res) => {
      expect(res.body).toMatchObject({ code: "document_in_use", open_in_sessions: 2 });
      expect(typeof res.body.suggested_action).toBe("string");
      expect(await listed(d.documentId, false)).toBe(true);
      for (const sid of [d.sessionId, ...d.otherSessions]) expect(await roster(sid)).toContain(d.documentId);
    },
  },
  {
    name: "active → active: DELETE without from_session counts the caller's own session as another",
    from: "active",
    others: 0,
    trigger: (d) => jsonCall(stack, "DELETE", `/v1/documents/${d.documentId}`, key),
    status: 409,
    next: "active",
    effects: async (_d, res) => expect(res.body.open_in_sessions).toBe(1),
  },
  {
    name: "archived → active: POST /v1/documents/{id}/unarchive; back in the Files view",
    from: "archived",
    others: 0,
    trigger: (d) => jsonCall(stack, "POST", `/v1/documents/${d.documentId}/unarchive`, key),
    status: 200,
    next: "active",
    effects: async (d, res) => {
      expect(res.body).toMatchObject({ status: "active", unarchived: true });
      expect(await listed(d.documentId, false)).toBe(true);
    },
  },
  {
    name: "archived → active: session unarchive without a body re-links it, content as it was",
    from: "archived",
    others: 0,
    trigger: (d) => jsonCall(stack, "POST", `/v1/sessions/${d.sessionId}/documents/${d.slotId}/unarchive`, key),
    status: 200,
    next: "active",
    effects: async (d, res) => {
      expect(res.body.unarchived).toBe(true);
      expect(res.body.document).toMatchObject({ durable_document_id: d.documentId, focused: true });
      expect(res.body.html).toBe(d.html);
      expect(await roster(d.sessionId)).toContain(d.documentId);
    },
  },
  {
    name: "archived → active: session unarchive with a body saves the edits on top",
    from: "archived",
    others: 0,
    trigger: (d) =>
      jsonCall(stack, "POST", `/v1/sessions/${d.sessionId}/documents/${d.documentId}/unarchive`, key, {
        html: d.html.replace("Text.", "Restored and edited."),
      }),
    status: 200,
    next: "active",
    effects: async (d, res) => {
      expect(res.body.html).toContain("Restored and edited.");
      const detail = await jsonCall(stack, "GET", `/v1/documents/${d.documentId}?include_html=true`, key);
      expect(detail.body.html).toContain("Restored and edited.");
    },
  },
  {
    name: "active → active: unarchive of an active document is a no-op success",
    from: "active",
    others: 0,
    trigger: (d) => jsonCall(stack, "POST", `/v1/documents/${d.documentId}/unarchive`, key),
    status: 200,
    next: "active",
    effects: async (_d, res) => expect(res.body.unarchived).toBe(false),
  },
  {
    name: "active → active: session unarchive of an active document is a no-op success",
    from: "active",
    others: 0,
    trigger: (d) => jsonCall(stack, "POST", `/v1/sessions/${d.sessionId}/documents/${d.slotId}/unarchive`, key),
    status: 200,
    next: "active",
    effects: async (d, res) => {
      expect(res.body.unarchived).toBe(false);
      expect(await roster(d.sessionId)).toEqual([d.documentId]);
    },
  },
];

describe("saved document state table", () => {
  for (const row of rows) {
    it(row.name, async () => {
      const doc = await arrange(row.others, row.from === "archived");
      expect(await state(doc.documentId)).toBe(row.from);
      const res = await row.trigger(doc);
      expect(res.status, JSON.stringify(res.body)).toBe(row.status);
      expect(await state(doc.documentId)).toBe(row.next);
      await row.effects?.(doc, res);
    });
  }

  it("unknown ids: both unarchive forms are no-op successes; archive is 404", async () => {
    const { sessionId } = await createSavedDocument(stack, key, "<p>x</p>");
    const unknown = randomUUID();
    const plain = await jsonCall(stack, "POST", `/v1/documents/${unknown}/unarchive`, key);
    expect(plain.status).toBe(200);
    expect(plain.body.unarchived).toBe(false);
    const inSession = await jsonCall(stack, "POST", `/v1/sessions/${sessionId}/documents/${unknown}/unarchive`, key);
    expect(inSession.status).toBe(200);
    expect(inSession.body.unarchived).toBe(false);
    expect((await jsonCall(stack, "DELETE", `/v1/documents/${unknown}`, key)).status).toBe(404);
  });
});
