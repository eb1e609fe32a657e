// Commits on a real database: merge, convergence, conflicts, idempotency, positions and counts.
import type { ChunkOperation } from "@redline/html-chunks";
import { ConflictError, InputError, NotFoundError } from "@redline/service-kit";
import { afterAll, describe, expect, it } from "vitest";
import { openConflicts } from "../db/store/conflicts.js";
import { migratedTestDb } from "../db/test-db.js";
import { commitOperations } from "./commit.js";
import { archiveDocument } from "./library.js";
import { createDocument } from "./load.js";
import { getDocument } from "./read.js";

const OWNER = "owner_commit";
const db = await migratedTestDb("unit_documents_commit");
afterAll(() => db.destroy());

const p = (id: string, text: string) => `<p data-chunk-id="${id}">${text}</p>`;
const replace = (chunkId: string, text: string): ChunkOperation => ({
  kind: "replace",
  chunkId,
  html: p(chunkId, text),
  explanation: "test",
});
const del = (chunkId: string): ChunkOperation => ({ kind: "delete", chunkId, explanation: "test" });
const insert = (chunkId: string, after: string | null, text: string): ChunkOperation => ({
  kind: "insert",
  chunkId,
  afterChunkId: after,
  html: p(chunkId, text),
  explanation: "test",
});

async function newDoc(ids = ["c_a", "c_b", "c_c"]) {
  const html = ids.map((id) => p(id, id.slice(2).toUpperCase())).join("");
  return createDocument(db, OWNER, { html, sessionId: "s1" });
}

function commit(documentId: string, baseVersionId: string, operations: ChunkOperation[], extra = {}) {
  return commitOperations(db, OWNER, {
    documentId,
    baseVersionId,
    sessionId: "s1",
    operations,
    summary: "test commit",
    returnChunks: true,
    ...extra,
  });
}

const texts = async (documentId: string) =>
  (await getDocument(db, OWNER, { documentId, includeChunks: true })).chunks.map((c) => c.chunkId);

describe("commitOperations on head", () => {
  it("applies replace, insert and delete as one version and keeps the head counts", async () => {
    const doc = await newDoc();
    const heading: ChunkOperation = {
      kind: "insert",
      chunkId: "c_h",
      afterChunkId: "c_a",
      html: `<h2 data-chunk-id="c_h">Title</h2>`,
      explanation: "",
    };
    const result = await commit(doc.row.id, doc.versionId, [replace("c_a", "A2"), heading, del("c_c")]);
    expect(result.committed).toBe(true);
    expect(result.merged).toBe(false);
    expect(result.row.head_seq).toBe(2);
    expect(result.row.chunk_count).toBe(3);
    expect(result.row.section_count).toBe(1);
    expect(result.chunks.map((c) => c.chunkId)).toEqual(["c_a", "c_h", "c_b"]);
    expect(result.changes.map((c) => c.operation)).toEqual(["edit", "create", "delete"]);
  });

  it("places a run of inserts in order between their anchor and the next chunk", async () => {
    const doc = await newDoc();
    await commit(doc.row.id, doc.versionId, [
      insert("c_1", "c_a", "1"),
      insert("c_2", "c_1", "2"),
      insert("c_0", null, "0"),
    ]);
    expect(await texts(doc.row.id)).toEqual(["c_0", "c_a", "c_1", "c_2", "c_b", "c_c"]);
  });

  it("moves a chunk as delete + insert in the same commit", async () => {
    const doc = await newDoc();
    await commit(doc.row.id, doc.versionId, [del("c_a"), insert("c_a", "c_c", "A moved")]);
    expect(await texts(doc.row.id)).toEqual(["c_b", "c_c", "c_a"]);
  });
});

describe("commitOperations on an older base", () => {
  it("merges disjoint changes onto a head that moved since the base", async () => {
    const doc = await newDoc();
    await commit(doc.row.id, doc.versionId, [replace("c_a", "other session")]);
    const result = await commit(doc.row.id, doc.versionId, [replace("c_b", "mine")]);
    expect(result.merged).toBe(true);
    expect(result.mergedChunkIds).toEqual(["c_a"]);
    expect(result.chunks.map((c) => c.html)).toEqual([p("c_a", "other session"), p("c_b", "mine"), p("c_c", "C")]);
  });

  it("sees the same change on both sides as no conflict and writes nothing for it", async () => {
    const doc = await newDoc();
    await commit(doc.row.id, doc.versionId, [replace("c_a", "same"), del("c_c")]);
    const result = await commit(doc.row.id, doc.versionId, [replace("c_a", "same"), del("c_c")]);
    expect(result.committed).toBe(false);
    expect(result.conflicts).toEqual([]);
    expect(result.row.head_seq).toBe(2);
  });

  it("refuses an overlapping change with chunk_conflict, writes nothing and records the conflict", async () => {
    const doc = await newDoc();
    const head = await commit(doc.row.id, doc.versionId, [replace("c_b", "theirs")]);
    const err = await commit(doc.row.id, doc.versionId, [replace("c_b", "ours"), replace("c_a", "fine")], {
      writer: "save",
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    const body = (err as ConflictError).toPayload().body as Record<string, unknown>;
    expect(body).toMatchObject({
      code: "chunk_conflict",
      chunk_ids: ["c_b"],
      head_version_id: head.row.head_version_id,
    });
    expect((await getDocument(db, OWNER, { documentId: doc.row.id, includeChunks: false })).row.head_seq).toBe(2);
    const [conflict] = await openConflicts(db, OWNER, [doc.row.id], "c_b");
    expect(conflict).toMatchObject({ kind: "save", base_html: p("c_b", "B"), ours_html: p("c_b", "ours") });
    expect(conflict.theirs_html).toBe(p("c_b", "theirs"));
  });

  it("with recordConflicts commits what merges and returns the clashing operations as conflicts", async () => {
    const doc = await newDoc();
    await commit(doc.row.id, doc.versionId, [replace("c_b", "theirs")]);
    const result = await commit(doc.row.id, doc.versionId, [replace("c_b", "ours"), replace("c_a", "fine")], {
      recordConflicts: true,
    });
    expect(result.committed).toBe(true);
    expect(result.conflicts.map((c) => [c.chunk_id, c.kind])).toEqual([["c_b", "chat"]]);
    expect(result.chunks.map((c) => c.html)).toEqual([p("c_a", "fine"), p("c_b", "theirs"), p("c_c", "C")]);
    expect(await openConflicts(db, OWNER, [doc.row.id], "c_b")).toHaveLength(1);
  });
});

describe("commitOperations refusals and retries", () => {
  it("replays a commit with the same idempotency key without writing", async () => {
    const doc = await newDoc();
    const first = await commit(doc.row.id, doc.versionId, [replace("c_a", "once")], { idempotencyKey: "k1" });
    const again = await commit(doc.row.id, doc.versionId, [replace("c_a", "twice")], { idempotencyKey: "k1" });
    expect(again.replayed).toBe(true);
    expect(again.committed).toBe(false);
    expect(again.row.head_version_id).toBe(first.row.head_version_id);
    expect(again.chunks[0].html).toBe(p("c_a", "once"));
  });

  it("names invalid operations and refuses archived documents", async () => {
    const doc = await newDoc();
    await expect(commit(doc.row.id, "", [])).rejects.toBeInstanceOf(InputError);
    await expect(commit(doc.row.id, "", [replace("c_zz", "x")])).rejects.toThrow(/operation 0: unknown chunk c_zz/);
    await expect(commit(doc.row.id, "", [insert("c_a", null, "dup")])).rejects.toThrow(/already exists/);
    await expect(commit(doc.row.id, "", [replace("c_a", "ok"), insert("c_n", "c_q", "x")])).rejects.toThrow(
      /operation 1: unknown chunk c_q/,
    );
    await expect(commit(doc.row.id, "not-a-version", [replace("c_a", "x")])).rejects.toThrow(/base_version_id/);
    await archiveDocument(db, OWNER, { documentId: doc.row.id, sessionId: "s1" });
    await expect(commit(doc.row.id, "", [replace("c_a", "x")])).rejects.toThrow(/archived/);
  });

  it("reads another owner's document as not found", async () => {
    const doc = await newDoc();
    const other = commitOperations(db, "someone_else", {
      documentId: doc.row.id,
      baseVersionId: "",
      sessionId: "s2",
      operations: [replace("c_a", "x")],
      summary: "",
      returnChunks: false,
    });
    await expect(other).rejects.toBeInstanceOf(NotFoundError);
  });
});
