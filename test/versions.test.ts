// A document's version history (GET /v1/documents/{id}/versions and .../versions/{version_id}):
// newest first with paging, what each version changed, one version's HTML on request, and owner
// scoping (another owner's document or version is a 404, never a leak).
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createSavedDocument, editChunk, jsonCall } from "./support/documents-client.js";
import { startTestStack, type TestStack } from "./support/stack.js";

let stack: TestStack;
let key: string;
let otherKey: string;

beforeAll(async () => {
  stack = await startTestStack(inject("infra"), { name: "versions" });
  key = await stack.createKey("vera");
  otherKey = await stack.createKey("otto");
});
afterAll(async () => {
  await stack?.close();
});

const DOC = "<h1>Terms</h1><p>Payment is due in 30 days.</p><h2>Scope</h2><p>We build it.</p>";

/** A saved document with a second version that changed one chunk. */
async function documentWithTwoVersions() {
  const saved = await createSavedDocument(stack, key, DOC);
  const chunkId = /data-chunk-id="([^"]+)"[^>]*>Payment/.exec(saved.html)?.[1] as string;
  const edited = editChunk(saved.html, chunkId, "30 days", "45 days");
  const second = await jsonCall(stack, "POST", `/v1/sessions/${saved.sessionId}/documents/${saved.slotId}/save`, key, {
    html: edited,
  });
  expect(second.status).toBe(200);
  return { ...saved, firstVersionId: saved.versionId, secondVersionId: second.body.version_id as string, edited };
}

describe("document versions", () => {
  it("lists versions newest first with kind, session, time and chunks changed", async () => {
    const doc = await documentWithTwoVersions();
    const res = await jsonCall(stack, "GET", `/v1/documents/${doc.documentId}/versions`, key);
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(2);
    const [newest, oldest] = res.body.versions;
    expect(newest.version_id).toBe(doc.secondVersionId);
    expect(oldest.version_id).toBe(doc.firstVersionId);
    expect(newest.seq).toBeGreaterThan(oldest.seq);
    expect(oldest.kind).toBe("create");
    expect(newest.kind).not.toBe("create");
    expect(newest.chunks_changed).toBe(1);
    expect(oldest.chunks_changed).toBe(4);
    expect(newest.session_id).toBe(doc.sessionId);
    expect(Number.isNaN(Date.parse(newest.created_at))).toBe(false);
    expect(typeof newest.summary).toBe("string");
    expect(Object.keys(newest).sort()).toEqual(
      ["chunks_changed", "created_at", "kind", "seq", "session_id", "summary", "version_id"].sort(),
    );
  });

  it("pages with limit and offset, clamps an over-large limit, refuses a bad one", async () => {
    const doc = await documentWithTwoVersions();
    const page = await jsonCall(stack, "GET", `/v1/documents/${doc.documentId}/versions?limit=1&offset=1`, key);
    expect(page.status).toBe(200);
    expect(page.body.total).toBe(2);
    expect(page.body.versions.map((v: { version_id: string }) => v.version_id)).toEqual([doc.firstVersionId]);
    const big = await jsonCall(stack, "GET", `/v1/documents/${doc.documentId}/versions?limit=100000`, key);
    expect(big.status).toBe(200);
    expect(big.body.versions).toHaveLength(2);
    for (const q of ["limit=0", "offset=-1", "limit=abc"]) {
      const bad = await jsonCall(stack, "GET", `/v1/documents/${doc.documentId}/versions?${q}`, key);
      expect(bad.status, q).toBe(422);
      expect(Array.isArray(bad.body.detail), q).toBe(true);
    }
  });

  it("returns one version's metadata, and its HTML only when asked", async () => {
    const doc = await documentWithTwoVersions();
    const base = `/v1/documents/${doc.documentId}/versions`;
    const meta = await jsonCall(stack, "GET", `${base}/${doc.firstVersionId}`, key);
    expect(meta.status).toBe(200);
    expect(meta.body.version_id).toBe(doc.firstVersionId);
    expect(meta.body.kind).toBe("create");
    expect(meta.body).not.toHaveProperty("html");

    const first = await jsonCall(stack, "GET", `${base}/${doc.firstVersionId}?include_html=true`, key);
    expect(first.body.html).toBe(doc.html);
    const second = await jsonCall(stack, "GET", `${base}/${doc.secondVersionId}?include_html=true`, key);
    expect(second.body.html).toBe(doc.edited);
    expect(second.body.html).toContain("45 days");
  });

  it("answers 404 for another owner's document or version, and for a version of another document", async () => {
    const doc = await documentWithTwoVersions();
    const other = await createSavedDocument(stack, key, "<p>Other</p>");
    const cases: [string, string][] = [
      [otherKey, `/v1/documents/${doc.documentId}/versions`],
      [otherKey, `/v1/documents/${doc.documentId}/versions/${doc.firstVersionId}`],
      [key, `/v1/documents/${other.documentId}/versions/${doc.firstVersionId}`],
      [key, `/v1/documents/${doc.documentId}/versions/00000000-0000-4000-8000-000000000000`],
      [key, "/v1/documents/00000000-0000-4000-8000-000000000000/versions"],
    ];
    for (const [k, path] of cases) {
      const res = await jsonCall(stack, "GET", path, k);
      expect(res.status, path).toBe(404);
      expect(typeof res.body.detail, path).toBe("string");
    }
  });
});
