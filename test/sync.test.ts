// Concurrency and sync (issue section 3): saves merge at chunk level, concurrent writes to one
// chunk are reported (409 or concurrent_merges) and resolved by re-edit, doc-events deliver
// other sessions' commits in id order, and a randomized run of concurrent saves and AI edits
// loses no acknowledged write, keeps the stored versions consistent and every event stream whole.
import { documentsLibraryV1, documentsV1 } from "@redline/grpc-stubs";
import { createRpcClient } from "@redline/service-kit";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Body, createSavedDocument, jsonCall } from "./support/documents-client.js";
import { principalOf } from "./support/file-stack.js";
import { type ScriptedOpenAi, scriptedEngine, startScriptedOpenAi } from "./support/scripted-openai.js";
import { startTestStack, type TestStack } from "./support/stack.js";

let stack: TestStack;
let aiStack: TestStack;
let model: ScriptedOpenAi;
let key: string;
let aiKey: string;

beforeAll(async () => {
  model = await startScriptedOpenAi();
  [stack, aiStack] = await Promise.all([
    startTestStack(inject("infra"), { name: "sync" }),
    startTestStack(inject("infra"), {
      name: "syncai",
      openai: scriptedEngine(model, { model: "m", requestTimeoutMs: 10_000, maxSteps: 6 }),
    }),
  ]);
  key = await stack.createKey("sam");
  aiKey = await aiStack.createKey("sam");
});
afterAll(async () => {
  await Promise.all([stack?.close(), aiStack?.close()]);
  await model?.close();
});

/** Chunk ids of an HTML string in order. */
function chunkIds(html: string): string[] {
  return [...html.matchAll(/data-chunk-id="([^"]+)"/g)].map((m) => m[1]);
}

/** The HTML with one chunk's closing tag preceded by `suffix` (the chunk keeps everything else). */
function appendToChunk(html: string, chunkId: string, suffix: string): string {
  return html
    .split("\n")
    .map((part) => (part.includes(`data-chunk-id="${chunkId}"`) ? part.replace(/<\/(\w+)>$/, `${suffix}</$1>`) : part))
    .join("\n");
}

const save = (s: TestStack, k: string, sid: string, doc: string, html: string, base?: string) =>
  jsonCall(s, "POST", `/v1/sessions/${sid}/documents/${doc}/save`, k, { html, base_version_id: base });

async function headHtml(s: TestStack, k: string, documentId: string): Promise<{ html: string; version: string }> {
  const res = await jsonCall(s, "GET", `/v1/documents/${documentId}?include_html=true`, k);
  return { html: res.body.html, version: res.body.version_id };
}

describe("saves across sessions", () => {
  it("merges disjoint chunks, refuses the same chunk with 409, and re-edit resolves it (billed once)", async () => {
    const a = await createSavedDocument(stack, key, "<h1>Terms</h1><p>One.</p><p>Two.</p><p>Three.</p>");
    const b = await jsonCall(stack, "POST", "/v1/sessions/init", key, { document_ids: [a.documentId] });
    const bSid = b.body.session_id;
    const [, one, two] = chunkIds(a.html);

    const first = await save(stack, key, a.sessionId, a.slotId, appendToChunk(a.html, one, " A wrote this."));
    expect(first.status).toBe(200);
    expect(first.body.changed_chunk_ids).toEqual([one]);
    // B still holds the original version: its edit of another chunk merges.
    const second = await save(stack, key, bSid, a.documentId, appendToChunk(a.html, two, " B wrote this."));
    expect(second.status).toBe(200);
    expect(second.body.merged).toBe(true);
    expect(second.body.html).toContain("A wrote this.");
    expect(second.body.html).toContain("B wrote this.");
    // Untouched chunks stay byte-identical.
    expect(second.body.html.split("\n")[3]).toBe(a.html.split("\n")[3]);

    // B's stale edit of chunk `one` conflicts: 409 naming it, nothing written.
    const before = await headHtml(stack, key, a.documentId);
    const clash = await save(stack, key, bSid, a.documentId, appendToChunk(a.html, one, " B disagrees."), a.versionId);
    expect(clash.status).toBe(409);
    expect(clash.body).toMatchObject({ code: "chunk_conflict", chunk_ids: [one] });
    expect(clash.body.conflicts).toHaveLength(1);
    expect(await headHtml(stack, key, a.documentId)).toEqual(before);

    const reEdit = await jsonCall(stack, "POST", `/v1/sessions/${bSid}/chunks/${one}/re-edit`, key, { mode: "merge" });
    expect(reEdit.status).toBe(200);
    expect(reEdit.body.chunk_id).toBe(one);
    expect(reEdit.body.html).toContain("B disagrees.");
    expect(reEdit.body.html).toContain("A wrote this.");
    expect(reEdit.body.usage.ops_charged).toBe(1);
    expect((await headHtml(stack, key, a.documentId)).version).toBe(reEdit.body.version_id);
    // Resolved: a second re-edit has nothing to resolve.
    const again = await jsonCall(stack, "POST", `/v1/sessions/${bSid}/chunks/${one}/re-edit`, key, { mode: "redo" });
    expect(again.status).toBe(404);
    expect(
      (await jsonCall(stack, "POST", `/v1/sessions/${bSid}/chunks/${one}/re-edit`, key, { mode: "blend" })).status,
    ).toBe(422);
  });

  it("redo re-applies the other side's change on the user's text", async () => {
    const a = await createSavedDocument(stack, key, "<p>Acme pays within 30 days.</p>");
    const b = await jsonCall(stack, "POST", "/v1/sessions/init", key, { document_ids: [a.documentId] });
    const [chunk] = chunkIds(a.html);
    await save(stack, key, a.sessionId, a.slotId, a.html.replace("Acme", "Globex"));
    const clash = await save(
      stack,
      key,
      b.body.session_id,
      a.documentId,
      a.html.replace("30 days", "45 days"),
      a.versionId,
    );
    expect(clash.status).toBe(409);
    const redo = await jsonCall(stack, "POST", `/v1/sessions/${b.body.session_id}/chunks/${chunk}/re-edit`, key, {
      mode: "redo",
    });
    expect(redo.status).toBe(200);
    expect(redo.body.html).toContain("Globex pays within 45 days.");
  });
});

describe("a save whose answer was lost before the session recorded it", () => {
  /**
   * A session whose save reached documents but whose slot still records the version before it,
   * as when sessions dies between documents' commit and its own record (faults-kill saw this):
   * the save is made straight on documents in the session's name. Returns the saved version.
   */
  async function lostSave(a: { sessionId: string; documentId: string; versionId: string }, html: string) {
    const library = createRpcClient(documentsLibraryV1.DocumentLibraryServiceService, stack.addrs.documents);
    try {
      const principal = await principalOf(stack, key);
      const input = { documentId: a.documentId, html, baseVersionId: a.versionId, sessionId: a.sessionId };
      const saved = await library.saveDocument({ ...input, baseIsLastSeen: false }, { principal });
      return saved.document?.versionId ?? "";
    } finally {
      library.close();
    }
  }

  it("creates a blank tab's document once when its first save is retried after the create", async () => {
    const init = await jsonCall(stack, "POST", "/v1/sessions/init", key, {});
    const sid = init.body.session_id as string;
    const blank = await jsonCall(stack, "POST", `/v1/sessions/${sid}/documents/blank`, key, { title: "Once only" });
    const slotId = blank.body.document.document_id as string;
    const slotRow = await stack.sessionsDb("sessions.roster").where({ session_id: sid, slot_id: slotId }).first();
    // What documents holds when sessions died between its create and the slot's attach: the
    // document made under the key sessions gives that slot's first save.
    const documents = createRpcClient(documentsV1.DocumentsServiceService, stack.addrs.documents);
    const idempotencyKey = `first-save:${sid}:${slotId}:${slotRow.opened_at.toISOString()}`;
    const first = await documents
      .createDocument(
        { html: "<p>Draft one.</p>", title: "Once only", sessionId: sid, idempotencyKey },
        { principal: await principalOf(stack, key) },
      )
      .finally(() => documents.close());
    const before = (await jsonCall(stack, "GET", "/v1/documents", key)).body.documents.length;

    // The client retries with what its editor holds by now.
    const retried = await save(stack, key, sid, slotId, "<p>Draft one.</p><p>And two.</p>");
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ created: true, durable_document_id: first.document?.documentId });
    expect(retried.body.html).toContain("And two.");
    expect(retried.body.changed_chunk_ids).toEqual(chunkIds(retried.body.html));
    expect((await jsonCall(stack, "GET", "/v1/documents", key)).body.documents.length).toBe(before);
    const slot = await stack.sessionsDb("sessions.roster").where({ session_id: sid, slot_id: slotId }).first();
    expect(slot).toMatchObject({
      document_id: first.document?.documentId,
      last_seen_version_id: retried.body.version_id,
    });

    // Another blank tab's first save makes a document of its own.
    const other = await jsonCall(stack, "POST", `/v1/sessions/${sid}/documents/blank`, key, {});
    const second = await save(stack, key, sid, other.body.document.document_id, "<p>Draft one.</p>");
    expect(second.body).toMatchObject({ created: true });
    expect(second.body.durable_document_id).not.toBe(first.document?.documentId);
  });

  it("adds a retried save's new paragraphs once, with or without its base", async () => {
    const a = await createSavedDocument(stack, key, "<h1>Terms</h1><p>One.</p>");
    const sent = `${a.html}\n<p>Added once.</p><p>Added once.</p>`;
    await lostSave(a, sent);
    const count = (html: string) => html.split("Added once.").length - 1;
    // The slot's record missed the first attempt; so does the client's own base.
    const retried = await save(stack, key, a.sessionId, a.slotId, sent);
    expect(retried.status).toBe(200);
    expect(count(retried.body.html)).toBe(2);
    const withBase = await save(stack, key, a.sessionId, a.slotId, sent, a.versionId);
    expect(withBase.status).toBe(200);
    expect(count(withBase.body.html)).toBe(2);
    // A different new paragraph from the same base is a paragraph of its own.
    const other = await save(stack, key, a.sessionId, a.slotId, `${a.html}\n<p>Another.</p>`, a.versionId);
    expect(other.status).toBe(200);
    expect(count(other.body.html)).toBe(2);
    expect(other.body.html).toContain("Another.");
  });

  it("takes the session's next save over its own: no 409 against itself, slot recorded", async () => {
    const a = await createSavedDocument(stack, key, "<h1>Terms</h1><p>One.</p><p>Two.</p>");
    const [, one, two] = chunkIds(a.html);
    const sent = appendToChunk(appendToChunk(a.html, one, " first"), two, " too");
    const lost = await lostSave(a, sent);
    const slot = () =>
      stack.sessionsDb("sessions.roster").where({ session_id: a.sessionId, slot_id: a.slotId }).first();
    expect((await slot()).last_seen_version_id).toBe(a.versionId);
    expect(await stack.documentsDb("documents.versions").where({ id: lost }).first()).toMatchObject({
      session_id: a.sessionId,
      writer: "save",
    });

    // The editor still holds what it sent, and edits the same chunk on: before, every such save
    // was a 409 naming the session's own change, for as long as the slot's record stayed behind.
    const next = await save(stack, key, a.sessionId, a.slotId, appendToChunk(sent, one, ", second"));
    expect(next.status).toBe(200);
    expect(next.body.merged).toBe(true);
    expect(next.body.html).toContain("One. first, second</p>");
    expect(next.body.html).toContain("Two. too</p>");
    // Only the chunk edited since is written again: the other already reads as sent.
    const written = await stack
      .documentsDb("documents.chunk_revisions as c")
      .join("documents.versions as v", (j) => j.on("v.document_id", "c.document_id").andOn("v.seq", "c.valid_from"))
      .where("v.id", next.body.version_id)
      .pluck("c.chunk_id");
    expect(written).toEqual([one]);
    expect((await slot()).last_seen_version_id).toBe(next.body.version_id);
    // The client's own word on its base is kept: from the version before its lost save, its
    // edit of that chunk clashes with the one it made since.
    const stale = await save(stack, key, a.sessionId, a.slotId, appendToChunk(a.html, one, " other"), a.versionId);
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ code: "chunk_conflict", chunk_ids: [one] });
  });

  it("still merges around, and refuses, what other sessions changed since the session's own save", async () => {
    const a = await createSavedDocument(stack, key, "<h1>Terms</h1><p>One.</p><p>Two.</p><p>Three.</p>");
    const b = await jsonCall(stack, "POST", "/v1/sessions/init", key, { document_ids: [a.documentId] });
    const [, one, two, three] = chunkIds(a.html);
    const mine = appendToChunk(a.html, one, " A");
    const lost = await lostSave(a, mine);
    const theirs = await save(stack, key, b.body.session_id, a.documentId, appendToChunk(mine, two, " B"), lost);
    expect(theirs.status).toBe(200);

    // Disjoint: B's chunk is merged around and kept.
    const merged = await save(stack, key, a.sessionId, a.slotId, appendToChunk(mine, three, " A again"));
    expect(merged.status).toBe(200);
    expect(merged.body).toMatchObject({ changed_chunk_ids: [three], merged: true });
    expect(merged.body.html).toContain("Two. B</p>");
    expect(merged.body.html).toContain("Three. A again</p>");

    // The same chunk as B, from a slot whose record missed a save again: a 409 naming B's chunk
    // alone (the session's own chunk would have taken its word), and nothing written.
    const current = { ...a, versionId: merged.body.version_id };
    const sentAgain = appendToChunk(merged.body.html, one, " A2");
    const lostAgain = await lostSave(current, sentAgain);
    const bHtml = (await headHtml(stack, key, a.documentId)).html;
    const bAgain = await save(stack, key, b.body.session_id, a.documentId, appendToChunk(bHtml, two, " B2"), lostAgain);
    expect(bAgain.status).toBe(200);
    const before = await headHtml(stack, key, a.documentId);
    const both = appendToChunk(appendToChunk(sentAgain, one, ", more"), two, " A on two");
    const clash = await save(stack, key, a.sessionId, a.slotId, both);
    expect(clash.status).toBe(409);
    expect(clash.body).toMatchObject({ code: "chunk_conflict", chunk_ids: [two] });
    expect(await headHtml(stack, key, a.documentId)).toEqual(before);
  });
});

describe("doc-events", () => {
  it("delivers other sessions' commits in id order, own writes only with include_own", async () => {
    const a = await createSavedDocument(stack, key, "<p>x</p><p>y</p>");
    const b = await jsonCall(stack, "POST", "/v1/sessions/init", key, { document_ids: [a.documentId] });
    const bSid = b.body.session_id;
    const start = await jsonCall(stack, "GET", `/v1/sessions/${bSid}/doc-events`, key);
    const cursor = start.body.last_id;

    const [x, y] = chunkIds(a.html);
    const s1 = await save(stack, key, a.sessionId, a.slotId, appendToChunk(a.html, x, " 1"));
    await save(stack, key, bSid, a.documentId, appendToChunk(s1.body.html, y, " 2"));
    await jsonCall(stack, "PATCH", `/v1/documents/${a.documentId}`, key, { title: "Renamed" });

    const theirs = await jsonCall(stack, "GET", `/v1/sessions/${bSid}/doc-events?after_id=${cursor}`, key);
    expect(theirs.status).toBe(200);
    expect(theirs.body.events.map((e: Body) => [e.change, e.session_id])).toEqual([
      ["save", a.sessionId],
      ["metadata", undefined],
    ]);
    // A metadata change has no committing session: the field is left out, never null.
    expect(theirs.body.events[1]).not.toHaveProperty("session_id");
    expect(theirs.body.events[0]).toMatchObject({
      type: "document_updated",
      document_id: a.documentId,
      version_id: s1.body.version_id,
      chunk_ids: [x],
    });
    expect(theirs.body.events[1].title).toBe("Renamed");
    const all = await jsonCall(
      stack,
      "GET",
      `/v1/sessions/${bSid}/doc-events?after_id=${cursor}&include_own=true`,
      key,
    );
    expect(all.body.events).toHaveLength(3);
    const idList = all.body.events.map((e: Body) => e.id);
    expect([...idList].sort((p: number, q: number) => p - q)).toEqual(idList);
    const paged = await jsonCall(
      stack,
      "GET",
      `/v1/sessions/${bSid}/doc-events?after_id=${idList[0]}&include_own=true&limit=1`,
      key,
    );
    expect(paged.body.events.map((e: Body) => e.id)).toEqual([idList[1]]);
    expect(paged.body.has_more).toBe(true);
    expect((await jsonCall(stack, "GET", `/v1/sessions/${bSid}/doc-events?after_id=-1`, key)).status).toBe(422);
  });
});

describe("chat meeting another session's commit", () => {
  it("records the AI's edit of a chunk changed meanwhile as a concurrent_merges conflict; re-edit redo uses the model", async () => {
    const a = await createSavedDocument(aiStack, aiKey, "<h1>Fees</h1><p>Fee is 10 EUR.</p><p>Due monthly.</p>");
    const [, fee, due] = chunkIds(a.html);
    const other = await jsonCall(aiStack, "POST", "/v1/sessions/init", aiKey, { document_ids: [a.documentId] });
    model.push(
      async () => {
        // While the model "thinks", the user saves the same chunk in another session.
        const res = await save(aiStack, aiKey, other.body.session_id, a.documentId, a.html.replace("10 EUR", "12 EUR"));
        expect(res.status).toBe(200);
        return {
          toolCalls: [
            {
              name: "replace_chunk",
              arguments: JSON.stringify({ chunk_id: fee, html: "<p>Fee is 10 EUR plus VAT.</p>", explanation: "VAT" }),
            },
            {
              name: "replace_chunk",
              arguments: JSON.stringify({ chunk_id: due, html: "<p>Due quarterly.</p>", explanation: "cadence" }),
            },
          ],
        };
      },
      { content: "Added VAT and changed the cadence." },
    );
    const chat = await jsonCall(aiStack, "POST", "/v1/chat", aiKey, {
      session_id: a.sessionId,
      message: "add VAT, bill quarterly",
    });
    expect(chat.status).toBe(200);
    const merges = chat.body.document_changes.concurrent_merges;
    expect(merges).toEqual([expect.objectContaining({ chunk_id: fee, status: "conflict", document_id: a.documentId })]);
    expect(chat.body.document_changes.chunk_diffs.map((d: Body) => d.chunk_id)).toEqual([due]);
    expect(chat.body.usage.ops_charged).toBe(1);
    const head = await headHtml(aiStack, aiKey, a.documentId);
    expect(head.html).toContain("Fee is 12 EUR.");
    expect(head.html).toContain("Due quarterly.");

    model.push(
      {
        toolCalls: [
          {
            name: "replace_chunk",
            arguments: JSON.stringify({ chunk_id: fee, html: "<p>Fee is 12 EUR plus VAT.</p>", explanation: "redo" }),
          },
        ],
      },
      { content: "done" },
    );
    const redo = await jsonCall(aiStack, "POST", `/v1/sessions/${a.sessionId}/chunks/${fee}/re-edit`, aiKey, {
      mode: "redo",
    });
    expect(redo.status).toBe(200);
    expect(redo.body.html).toContain("Fee is 12 EUR plus VAT.");
    expect(model.requests.at(-2)?.messages.some((m) => String(m.content).includes("12 EUR"))).toBe(true);
  });
});

describe("memory note", () => {
  it("is read by the agent at the start of a turn and updated at its end, per memory key", async () => {
    const said = (i: number) =>
      model.requests[i].messages
        .filter((m) => m.role === "system")
        .map((m) => (typeof m.content === "string" ? m.content : ""))
        .join("\n");
    model.push({ content: "Noted." }, { content: "Done." }, { content: "Done." });
    const first = model.requests.length;
    const chat = (message: string, memoryKey: string) =>
      jsonCall(aiStack, "POST", "/v1/chat", aiKey, { message, cross_session_memory_key: memoryKey });
    expect((await chat("Always use British spelling.", "customer-1")).status).toBe(200);
    expect((await chat("Draft a greeting.", "customer-1")).status).toBe(200);
    expect((await chat("Draft a farewell.", "customer-2")).status).toBe(200);
    expect(said(first)).not.toContain("Always use British spelling.");
    expect(said(first + 1)).toContain("Always use British spelling.");
    expect(said(first + 2)).not.toContain("Always use British spelling.");
    const cleared = await jsonCall(aiStack, "DELETE", "/v1/users/me/cross-session-memory?memory_key=customer-1", aiKey);
    expect(cleared.body.removed).toBe(1);
  });
});

describe("randomized concurrent saves and AI edits", () => {
  const CHUNKS = 5;
  const SESSIONS = 3;
  const command = fc.record({
    session: fc.integer({ min: 0, max: SESSIONS - 1 }),
    kind: fc.constantFrom("save", "save", "chat"),
    chunk: fc.integer({ min: 0, max: CHUNKS - 1 }),
    refresh: fc.boolean(),
  });

  /** Opens the saved document in SESSIONS sessions (the first is the one that created it). */
  const openSessions = async (origin: { sessionId: string; documentId: string }) => {
    const sessions = [origin.sessionId];
    for (let i = 1; i < SESSIONS; i++) {
      const init = await jsonCall(stack, "POST", "/v1/sessions/init", key, { document_ids: [origin.documentId] });
      sessions.push(init.body.session_id);
    }
    return sessions;
  };

  /**
   * One doc-events poller per session: a session reads its stream sequentially, cursor after
   * cursor, and `seen[s]` collects the event ids session s received.
   */
  const docEventPollers = (sessions: string[]) => {
    const cursors = sessions.map(() => 0);
    const seen: number[][] = sessions.map(() => []);
    const pollers = sessions.map(() => Promise.resolve());
    const pollOnce = async (s: number) => {
      for (;;) {
        const url = `/v1/sessions/${sessions[s]}/doc-events?after_id=${cursors[s]}&limit=3`;
        const res = await jsonCall(stack, "GET", url, key);
        seen[s].push(...res.body.events.map((e: Body) => e.id));
        cursors[s] = res.body.last_id;
        if (!res.body.has_more) return;
      }
    };
    const poll = (s: number) => {
      pollers[s] = pollers[s].then(() => pollOnce(s));
      return pollers[s];
    };
    return { poll, seen };
  };

  /** The stored head equals a replay of the versions' chunk revisions in seq order. */
  const expectReplayIsHead = async (documentId: string, headHtml: string) => {
    const db = stack.documentsDb;
    const doc = await db("documents.documents").where({ id: documentId }).first();
    const versions = await db("documents.versions").where({ document_id: documentId }).orderBy("seq");
    expect(versions.map((v: Body) => v.seq)).toEqual(versions.map((_: Body, i: number) => i + 1));
    expect(versions.at(-1).id).toBe(doc.head_version_id);
    const revisions = await db("documents.chunk_revisions").where({ document_id: documentId });
    const live = new Map<string, { html: string; position: string }>();
    for (const v of versions) {
      for (const r of revisions.filter((x: Body) => x.valid_to === v.seq)) live.delete(r.chunk_id);
      for (const r of revisions.filter((x: Body) => x.valid_from === v.seq)) {
        expect(live.has(r.chunk_id)).toBe(false);
        live.set(r.chunk_id, { html: r.html, position: r.position });
      }
    }
    const replayed = [...live.values()]
      .sort((p, q) => (p.position < q.position ? -1 : p.position > q.position ? 1 : 0))
      .map((c) => c.html)
      .join("\n");
    expect(replayed).toBe(headHtml);
  };

  /** Each session saw exactly the other sessions' events, once each, in id order. */
  const expectEachSawTheOthers = async (documentId: string, sessions: string[], seen: number[][]) => {
    const outbox = await stack
      .documentsDb("documents.outbox")
      .where({ document_id: documentId, event_type: "document_updated" })
      .orderBy("id");
    for (let s = 0; s < SESSIONS; s++) {
      const expected = outbox.filter((e: Body) => e.session_id !== sessions[s]).map((e: Body) => Number(e.id));
      expect(seen[s]).toEqual(expected);
    }
  };

  it("loses no acknowledged write, replays to the stored head, and streams every event once", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 6, maxLength: 14 }), async (commands) => {
        run++;
        const body = Array.from({ length: CHUNKS }, (_, i) => `<p>c${i}:</p>`).join("");
        const origin = await createSavedDocument(stack, key, body);
        const ids = chunkIds(origin.html);
        const sessions = await openSessions(origin);
        const views = sessions.map(() => ({ html: origin.html, version: origin.versionId }));
        const acked = new Set<string>();
        const refused = new Set<string>();
        const { poll, seen } = docEventPollers(sessions);
        const refresh = async (s: number) => {
          const head = await headHtml(stack, key, origin.documentId);
          views[s] = { html: head.html, version: head.version };
        };

        const exec = async (cmd: (typeof commands)[number], n: number) => {
          const token = `t${run}x${n}`;
          const chunk = ids[cmd.chunk];
          if (cmd.refresh) await refresh(cmd.session);
          if (cmd.kind === "save") {
            const view = views[cmd.session];
            const edited = appendToChunk(view.html, chunk, ` ${token}`);
            const res = await save(stack, key, sessions[cmd.session], origin.documentId, edited, view.version);
            if (res.status === 200) {
              acked.add(token);
              views[cmd.session] = { html: res.body.html, version: res.body.version_id };
            } else {
              expect(res.status).toBe(409);
              expect(res.body.chunk_ids).toContain(chunk);
              refused.add(token);
              await refresh(cmd.session);
            }
          } else {
            const res = await jsonCall(stack, "POST", "/v1/chat", key, {
              session_id: sessions[cmd.session],
              document_id: origin.documentId,
              message: `replace "c${cmd.chunk}:" with "c${cmd.chunk}: ${token}"`,
            });
            expect(res.status).toBe(200);
            const conflict = (res.body.document_changes?.concurrent_merges ?? []).some(
              (m: Body) => m.status === "conflict" && m.chunk_id === chunk,
            );
            if (conflict) refused.add(token);
            else acked.add(token);
          }
          await poll(cmd.session);
        };
        // Commands run three at a time, so sessions race on the same chunks.
        for (let i = 0; i < commands.length; i += 3) {
          await Promise.all(commands.slice(i, i + 3).map((cmd, j) => exec(cmd, i + j)));
        }
        for (let s = 0; s < SESSIONS; s++) await poll(s);

        // Every acknowledged write is in the stored document; no refused one is.
        const head = await headHtml(stack, key, origin.documentId);
        for (const token of acked) expect(head.html).toContain(` ${token}`);
        for (const token of refused) expect(head.html).not.toContain(` ${token}<`);
        await expectReplayIsHead(origin.documentId, head.html);
        await expectEachSawTheOthers(origin.documentId, sessions, seen);
      }),
      { numRuns: 4, endOnFailure: true },
    );
  });
});
