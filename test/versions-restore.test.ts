// Version restore and diff (issue 34 part 4) on the real stack: POST .../versions/{id}/restore
// writes a new version equal to the old one, not billed, seen by other sessions that hold the
// document (doc-events, roster), refused with 409 job_running while a job awaits approval on a
// session holding it; GET .../versions/{id}/diff answers the chunks that changed as change
// records; another owner gets 404 and malformed ids a 4xx with the spec body.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Body, createSavedDocument, editChunk, jsonCall } from "./support/documents-client.js";
import { startJobAwaitingApproval } from "./support/jobs.js";
import { startTestStack, type TestStack } from "./support/stack.js";

let stack: TestStack;
let key: string;
let otherKey: string;

beforeAll(async () => {
  stack = await startTestStack(inject("infra"), { name: "versions-restore" });
  key = await stack.createKey("rhea");
  otherKey = await stack.createKey("otto");
});
afterAll(async () => {
  await stack?.close();
});

const DOC = "<h1>Terms</h1><p>Payment is due in 30 days.</p><h2>Scope</h2><p>We build it.</p>";

/** A saved document (v1) and a save that changed one chunk (v2). */
async function documentWithTwoVersions(k = key) {
  const saved = await createSavedDocument(stack, k, DOC);
  const chunkId = /data-chunk-id="([^"]+)"[^>]*>Payment/.exec(saved.html)?.[1] as string;
  const edited = editChunk(saved.html, chunkId, "30 days", "45 days");
  const second = await jsonCall(stack, "POST", `/v1/sessions/${saved.sessionId}/documents/${saved.slotId}/save`, k, {
    html: edited,
  });
  expect(second.status).toBe(200);
  return { ...saved, chunkId, v1: saved.versionId, v2: second.body.version_id as string, edited };
}

const versionsOf = (documentId: string) => `/v1/documents/${documentId}/versions`;

describe("POST /v1/documents/{id}/versions/{version_id}/restore", () => {
  it("writes a new version whose HTML equals the restored one, in the version shape plus restored_from", async () => {
    const doc = await documentWithTwoVersions();
    const res = await jsonCall(stack, "POST", `${versionsOf(doc.documentId)}/${doc.v1}/restore`, key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ restored: true, restored_from: doc.v1, kind: "restore", seq: 3 });
    expect(res.body.version_id).not.toBe(doc.v1);
    expect(res.body.chunks_changed).toBe(1);
    expect(res.body.summary).toBe("restored from version 1");
    expect(Object.keys(res.body).sort()).toEqual(
      ["chunks_changed", "created_at", "kind", "restored", "restored_from", "seq", "summary", "version_id"].sort(),
    );

    const restored = await jsonCall(
      stack,
      "GET",
      `${versionsOf(doc.documentId)}/${res.body.version_id}?include_html=true`,
      key,
    );
    expect(restored.body.html).toBe(doc.html);
    const head = await jsonCall(stack, "GET", `/v1/documents/${doc.documentId}?include_html=true`, key);
    expect(head.body.version_id).toBe(res.body.version_id);
    expect(head.body.html).toBe(doc.html);
    // History is kept: v2 is still there and still says 45 days.
    const list = await jsonCall(stack, "GET", versionsOf(doc.documentId), key);
    expect(list.body.versions.map((v: Body) => v.version_id)).toEqual([res.body.version_id, doc.v2, doc.v1]);
  });

  it("restoring the current content writes nothing and answers restored: false with head", async () => {
    const doc = await documentWithTwoVersions();
    const res = await jsonCall(stack, "POST", `${versionsOf(doc.documentId)}/${doc.v2}/restore`, key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ restored: false, restored_from: doc.v2, version_id: doc.v2, seq: 2 });
    expect((await jsonCall(stack, "GET", versionsOf(doc.documentId), key)).body.total).toBe(2);
  });

  it("reaches another session holding the document as a doc-event and in its roster", async () => {
    const doc = await documentWithTwoVersions();
    const other = await jsonCall(stack, "POST", "/v1/sessions/init", key, { document_ids: [doc.documentId] });
    expect(other.status).toBe(200);
    const sid = other.body.session_id as string;
    const before = await jsonCall(stack, "GET", `/v1/sessions/${sid}/doc-events`, key);
    const cursor = before.body.last_id as number;

    const res = await jsonCall(stack, "POST", `${versionsOf(doc.documentId)}/${doc.v1}/restore`, key);
    expect(res.status).toBe(200);
    const events = await jsonCall(stack, "GET", `/v1/sessions/${sid}/doc-events?after_id=${cursor}`, key);
    expect(events.status).toBe(200);
    expect(events.body.events).toHaveLength(1);
    expect(events.body.events[0]).toMatchObject({
      type: "document_updated",
      document_id: doc.documentId,
      version_id: res.body.version_id,
      change: "restore",
      chunk_ids: [doc.chunkId],
    });
    const roster = await jsonCall(stack, "GET", `/v1/sessions/${sid}/documents?report_changed=true`, key);
    const entry = roster.body.documents.find((d: Body) => d.durable_document_id === doc.documentId);
    expect(entry.changed_since_seen).toBe(true);
  });

  it("is not billed: usage is the same before and after", async () => {
    const k = await stack.createKey("bill");
    const doc = await documentWithTwoVersions(k);
    const before = await jsonCall(stack, "GET", "/v1/usage", k);
    expect(before.status).toBe(200);
    const res = await jsonCall(stack, "POST", `${versionsOf(doc.documentId)}/${doc.v1}/restore`, k);
    expect(res.body.restored).toBe(true);
    const diff = await jsonCall(stack, "GET", `${versionsOf(doc.documentId)}/${res.body.version_id}/diff`, k);
    expect(diff.status).toBe(200);
    const after = await jsonCall(stack, "GET", "/v1/usage", k);
    expect(after.body.monthly_used).toBe(before.body.monthly_used);
    expect(after.body.monthly_remaining).toBe(before.body.monthly_remaining);
  });

  it("answers 409 job_running while a job awaits approval on a session holding the document", async () => {
    const k = await stack.createKey("jobs");
    const { sid, waiting } = await startJobAwaitingApproval(stack, k);
    const roster = await jsonCall(stack, "GET", `/v1/sessions/${sid}/documents`, k);
    const documentId = roster.body.documents[0].durable_document_id as string;
    const versions = await jsonCall(stack, "GET", versionsOf(documentId), k);
    const v1 = versions.body.versions.at(-1).version_id as string;
    // A second session holds it too, with no job of its own: the job session alone is named.
    await jsonCall(stack, "POST", "/v1/sessions/init", k, { document_ids: [documentId] });

    const refused = await jsonCall(stack, "POST", `${versionsOf(documentId)}/${v1}/restore`, k);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: "job_running", session_ids: [sid] });
    expect(typeof refused.body.detail).toBe("string");
    expect((await jsonCall(stack, "GET", versionsOf(documentId), k)).body.total).toBe(versions.body.total);

    // Once the job is gone the same restore goes through (head is v1: a no-op).
    const cancel = await jsonCall(stack, "POST", `/v1/jobs/${waiting.job_id}/cancel`, k);
    expect(cancel.status).toBe(200);
    const ok = await jsonCall(stack, "POST", `${versionsOf(documentId)}/${v1}/restore`, k);
    expect(ok.status).toBe(200);
  });

  it("answers 404 for another owner's document or version, and for unknown or malformed ids", async () => {
    const doc = await documentWithTwoVersions();
    const other = await createSavedDocument(stack, key, "<p>Other</p>");
    const cases: [string, string][] = [
      [otherKey, `${versionsOf(doc.documentId)}/${doc.v1}/restore`],
      [key, `${versionsOf(other.documentId)}/${doc.v1}/restore`],
      [key, `${versionsOf(doc.documentId)}/00000000-0000-4000-8000-000000000000/restore`],
      [key, `${versionsOf(doc.documentId)}/not-a-version/restore`],
      [key, `${versionsOf("00000000-0000-4000-8000-000000000000")}/${doc.v1}/restore`],
    ];
    for (const [k, path] of cases) {
      const res = await jsonCall(stack, "POST", path, k);
      expect(res.status, path).toBe(404);
      expect(typeof res.body.detail, path).toBe("string");
    }
    expect((await jsonCall(stack, "GET", versionsOf(doc.documentId), key)).body.total).toBe(2);
  });
});

describe("GET /v1/documents/{id}/versions/{version_id}/diff", () => {
  it("answers the changed chunk only, as a change record, against the predecessor by default", async () => {
    const doc = await documentWithTwoVersions();
    const res = await jsonCall(stack, "GET", `${versionsOf(doc.documentId)}/${doc.v2}/diff`, key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ document_id: doc.documentId, version_id: doc.v2, against_version_id: doc.v1 });
    expect(res.body.changes).toHaveLength(1);
    const [change] = res.body.changes;
    expect(change).toMatchObject({ operation: "edit", chunk_id: doc.chunkId, document_id: doc.documentId });
    expect(change.old_html).toContain("30 days");
    expect(change.new_html).toContain("45 days");
    expect(Object.keys(change).sort()).toEqual(
      ["ai_explanation", "change_id", "chunk_id", "document_id", "new_html", "old_html", "operation"].sort(),
    );

    const back = await jsonCall(stack, "GET", `${versionsOf(doc.documentId)}/${doc.v1}/diff?against=${doc.v2}`, key);
    expect(
      back.body.changes.map((c: Body) => [c.operation, c.old_html.includes("45"), c.new_html.includes("30")]),
    ).toEqual([["edit", true, true]]);
    const first = await jsonCall(stack, "GET", `${versionsOf(doc.documentId)}/${doc.v1}/diff`, key);
    expect(first.body).not.toHaveProperty("against_version_id");
    expect(first.body.changes.map((c: Body) => c.operation)).toEqual(["create", "create", "create", "create"]);
  });

  it("answers 404 for another owner or unknown versions, 422 with the spec body for a malformed against", async () => {
    const doc = await documentWithTwoVersions();
    const other = await documentWithTwoVersions();
    const cases: [string, string][] = [
      [otherKey, `${versionsOf(doc.documentId)}/${doc.v2}/diff`],
      [key, `${versionsOf(doc.documentId)}/${other.v2}/diff`],
      [key, `${versionsOf(doc.documentId)}/${doc.v2}/diff?against=${other.v1}`],
      [key, `${versionsOf(doc.documentId)}/not-a-version/diff`],
    ];
    for (const [k, path] of cases) {
      const res = await jsonCall(stack, "GET", path, k);
      expect(res.status, path).toBe(404);
      expect(typeof res.body.detail, path).toBe("string");
    }
    const bad = await jsonCall(stack, "GET", `${versionsOf(doc.documentId)}/${doc.v2}/diff?against=nope`, key);
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toEqual([expect.objectContaining({ loc: ["query", "against"], type: expect.any(String) })]);
  });
});
