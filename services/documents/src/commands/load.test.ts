// Creating and replacing documents on a real database: one-statement create, idempotent ids,
// verbatim replace that keeps unchanged revisions.
import { NotFoundError } from "@redline/service-kit";
import { afterAll, describe, expect, it } from "vitest";
import { eventsAfter } from "../db/store/outbox.js";
import { TABLES } from "../db/tables.js";
import { migratedTestDb } from "../db/test-db.js";
import { commitOperations } from "./commit.js";
import { createDocument, deriveTitle, idempotentDocumentId, replaceDocument } from "./load.js";
import { getDocument } from "./read.js";

const OWNER = "owner_load";
const db = await migratedTestDb("unit_documents_load");
afterAll(() => db.destroy());

const eventsOf = (documentId: string, type: string) =>
  eventsAfter(db, OWNER, { documentIds: [documentId], afterId: 0, excludeSessionId: "", types: [type], limit: 10 });

const HTML = `<h1 data-chunk-id="c_t">Report</h1><p data-chunk-id="c_a">Alpha</p><p data-chunk-id="c_b">Beta</p>`;

describe("createDocument", () => {
  it("stores version 1 with its chunks, counts, derived title and a document_created event", async () => {
    const view = await createDocument(db, OWNER, { html: HTML, sessionId: "s1", pageSetup: { size: "A4" } });
    expect(view.row).toMatchObject({ title: "Report", head_seq: 1, chunk_count: 3, section_count: 1 });
    expect(view.row.page_setup).toEqual({ size: "A4" });
    expect(view.chunks.map((c) => c.chunkId)).toEqual(["c_t", "c_a", "c_b"]);
    const [event] = await eventsOf(view.row.id, "document_created");
    expect(event.payload).toEqual({ title: "Report", chunk_count: 3 });
    const [version] = await db(TABLES.versions).where({ document_id: view.row.id });
    expect(version).toMatchObject({ seq: 1, kind: "create", parent_id: null, session_id: "s1" });
  });

  it("answers a retry with the same idempotency key with the first document, per owner", async () => {
    const first = await createDocument(db, OWNER, { html: HTML, sessionId: "s1", idempotencyKey: "job:1" });
    const again = await createDocument(db, OWNER, { html: "<p>other</p>", sessionId: "s1", idempotencyKey: "job:1" });
    expect(again.row.id).toBe(first.row.id);
    expect(again.chunks).toEqual(first.chunks);
    const otherOwner = await createDocument(db, "owner_other", { html: HTML, sessionId: "s", idempotencyKey: "job:1" });
    expect(otherOwner.row.id).not.toBe(first.row.id);
    expect(first.row.id).toBe(idempotentDocumentId(OWNER, "job:1"));
  });

  it("derives a title from the first words when there is no heading", () => {
    expect(deriveTitle([{ chunkId: "c", html: "<p>one two three four five six seven eight nine</p>" }])).toBe(
      "one two three four five six seven eight",
    );
    expect(deriveTitle([])).toBe("Untitled document");
  });
});

describe("replaceDocument", () => {
  it("writes a replace version, keeps unchanged revisions and counts the changed chunks", async () => {
    const doc = await createDocument(db, OWNER, { html: HTML, sessionId: "s1" });
    const next = `<h1 data-chunk-id="c_t">Report</h1><p data-chunk-id="c_a">Alpha 2</p><p data-chunk-id="c_n">New</p>`;
    const view = await replaceDocument(db, OWNER, {
      documentId: doc.row.id,
      html: next,
      sessionId: "s2",
      title: "Renamed",
    });
    expect(view.row).toMatchObject({ head_seq: 2, chunk_count: 3, title: "Renamed" });
    expect(view.versionId).toBe(view.row.head_version_id);
    const revisions = await db(TABLES.chunks).where({ document_id: doc.row.id, chunk_id: "c_t" });
    expect(revisions).toHaveLength(1);
    const [event] = await eventsOf(doc.row.id, "document_updated");
    // c_a changed, c_b went, c_n came: three.
    expect(event.payload).toEqual({ kind: "replace", changed_chunks: 3 });
    const v1 = await getDocument(db, OWNER, { documentId: doc.row.id, versionId: doc.versionId, includeChunks: true });
    expect(v1.chunks.map((c) => c.html).join("")).toBe(HTML);
  });

  it("reads another owner's id as not found", async () => {
    const doc = await createDocument(db, OWNER, { html: HTML, sessionId: "s1" });
    await expect(
      replaceDocument(db, "owner_other", { documentId: doc.row.id, html: "<p>x</p>", sessionId: "s" }),
    ).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("a document's original (issue #12)", () => {
  const SOURCE = { sourceId: "src_0123456789abcdef0123456789abcdef", format: "markdown" };

  it("records the original and its load version; include_source reads the chunks as loaded", async () => {
    const view = await createDocument(db, OWNER, { html: HTML, sessionId: "s1", source: SOURCE });
    expect(view.row).toMatchObject({ source_id: SOURCE.sourceId, source_format: "markdown", source_seq: 1 });
    await commitOperations(db, OWNER, {
      documentId: view.row.id,
      baseVersionId: view.versionId,
      sessionId: "s1",
      operations: [{ kind: "replace", chunkId: "c_a", html: "<p>Alpha, edited</p>", explanation: "" }],
      summary: "edit",
      returnChunks: false,
    });
    const read = await getDocument(db, OWNER, { documentId: view.row.id, includeChunks: true, includeSource: true });
    expect(read.chunks.find((c) => c.chunkId === "c_a")?.html).toContain("edited");
    expect(read.sourceChunks).toEqual(view.chunks);
    const plain = await getDocument(db, OWNER, { documentId: view.row.id, includeChunks: false });
    expect(plain.sourceChunks).toBeUndefined();
  });

  it("a replace records the new content's original at its version, or clears it when it has none", async () => {
    const view = await createDocument(db, OWNER, { html: HTML, sessionId: "s1", source: SOURCE });
    const txt = { sourceId: "src_ffffffffffffffffffffffffffffffff", format: "txt" };
    const replaced = await replaceDocument(db, OWNER, {
      documentId: view.row.id,
      html: "<p>x</p>",
      sessionId: "s1",
      source: txt,
    });
    expect(replaced.row).toMatchObject({ source_id: txt.sourceId, source_format: "txt", source_seq: 2 });
    const cleared = await replaceDocument(db, OWNER, { documentId: view.row.id, html: "<p>y</p>", sessionId: "s1" });
    expect(cleared.row).toMatchObject({ source_id: null, source_format: null, source_seq: null });
  });

  it("ignores a reference of an unknown format", async () => {
    const view = await createDocument(db, OWNER, {
      html: HTML,
      sessionId: "s1",
      source: { sourceId: "src_x", format: "pdf" },
    });
    expect(view.row.source_id).toBeNull();
  });
});
