// The store's query functions on a real database: owner scoping, revisions by version,
// changed-chunk sets, outbox order, conflicts and their resolution.
import { randomUUID } from "node:crypto";
import { isUuid } from "@redline/service-kit";
import { afterAll, describe, expect, it } from "vitest";
import { UNATTRIBUTED } from "../tables.js";
import { migratedTestDb } from "../test-db.js";
import { findConflict, insertConflicts, openConflicts, resolveConflicts } from "./conflicts.js";
import { findDocument, findDocuments, insertNewDocument, setArchived, updateMeta } from "./documents.js";
import { appendDocumentUpdated, markPublished, unpublishedEvents } from "./outbox.js";
import {
  chunkRecordsAt,
  chunksAtSeq,
  chunksChangedSince,
  closeRevisions,
  insertRevisions,
  lastRevision,
  liveChunks,
  livePositions,
  nextLivePosition,
} from "./revisions.js";
import { findVersion, findVersionByKey, insertVersion, versionsPage } from "./versions.js";

const OWNER = "owner_store";
const db = await migratedTestDb("unit_documents_store");
afterAll(() => db.destroy());

async function seed() {
  const id = randomUUID();
  const versionId = randomUUID();
  const chunks = [
    { chunkId: "c_a", html: "<p>A</p>", position: "a0" },
    { chunkId: "c_b", html: "<p>B</p>", position: "a1" },
  ];
  const row = await insertNewDocument(db, {
    id,
    ownerId: OWNER,
    title: "T",
    pageSetup: null,
    versionId,
    sessionId: "s",
    author: { kind: "user", name: "Ada" },
    sectionCount: 0,
    chunks,
    eventPayload: { title: "T", chunk_count: 2 },
    source: null,
  });
  if (!row) throw new Error("seed failed");
  return row;
}

describe("documents store", () => {
  it("creates a document in one statement and never twice for one id", async () => {
    const row = await seed();
    expect(row).toMatchObject({ owner_id: OWNER, head_seq: 1, chunk_count: 2 });
    const again = await insertNewDocument(db, {
      id: row.id,
      ownerId: OWNER,
      title: "x",
      pageSetup: null,
      versionId: randomUUID(),
      sessionId: "",
      author: UNATTRIBUTED,
      sectionCount: 0,
      chunks: [],
      eventPayload: {},
      source: null,
    });
    expect(again).toBeUndefined();
    expect(await findDocument(db, "other", row.id)).toBeUndefined();
    expect(await findDocument(db, OWNER, "not-a-uuid")).toBeUndefined();
    expect(isUuid(row.id)).toBe(true);
    expect((await findDocuments(db, OWNER, [row.id, row.id, "bad"])).map((d) => d.id)).toEqual([row.id]);
  });

  it("returns the row after metadata and archive updates", async () => {
    const row = await seed();
    const renamed = await updateMeta(db, row.id, { title: "New", pageSetup: { size: "A4" } });
    expect(renamed).toMatchObject({ title: "New", page_setup: { size: "A4" } });
    expect((await updateMeta(db, row.id, { pageSetup: null })).page_setup).toBeNull();
    expect((await setArchived(db, row.id, true)).archived_at).toBeInstanceOf(Date);
    expect((await setArchived(db, row.id, false)).archived_at).toBeNull();
  });
});

describe("revisions and versions store", () => {
  it("reads chunks by version, the live ones, positions and what changed since a version", async () => {
    const row = await seed();
    const v2 = randomUUID();
    await insertVersion(db, {
      id: v2,
      document_id: row.id,
      seq: 2,
      parent_id: row.head_version_id,
      session_id: "s",
      kind: "edit",
      author: "Redline AI",
      author_kind: "ai",
      summary: "",
      idempotency_key: "key",
    });
    await closeRevisions(db, row.id, ["c_a", "c_b"], 2);
    await insertRevisions(db, [
      { document_id: row.id, chunk_id: "c_a", position: "a0", html: "<p>A2</p>", valid_from: 2, valid_to: null },
      { document_id: row.id, chunk_id: "c_n", position: "a0V", html: "<p>N</p>", valid_from: 2, valid_to: null },
    ]);
    expect(await chunkRecordsAt(db, row.id, 1)).toEqual([
      { chunkId: "c_a", html: "<p>A</p>" },
      { chunkId: "c_b", html: "<p>B</p>" },
    ]);
    expect((await chunkRecordsAt(db, row.id)).map((c) => c.chunkId)).toEqual(["c_a", "c_n"]);
    expect((await liveChunks(db, row.id, ["c_a", "c_b"])).map((r) => r.html)).toEqual(["<p>A2</p>"]);
    expect((await chunksAtSeq(db, row.id, 1, ["c_b"])).map((r) => r.html)).toEqual(["<p>B</p>"]);
    expect(await livePositions(db, row.id)).toEqual(["a0", "a0V"]);
    expect(await nextLivePosition(db, row.id, "a0")).toBe("a0V");
    expect(await nextLivePosition(db, row.id, "a0V")).toBeNull();
    expect((await lastRevision(db, row.id, "c_b"))?.valid_to).toBe(2);
    expect([...(await chunksChangedSince(db, row.id, 1))].sort()).toEqual(["c_a", "c_b", "c_n"]);
    expect((await chunksChangedSince(db, row.id, 2)).size).toBe(0);
    expect((await findVersion(db, row.id, v2))?.seq).toBe(2);
    expect((await findVersionByKey(db, row.id, "key"))?.id).toBe(v2);
    const page = await versionsPage(db, row.id, { limit: 10, offset: 0 });
    // v2 revised c_a, deleted c_b and inserted c_n; v1 created two chunks.
    expect(page.map((v) => [v.seq, v.chunks_changed])).toEqual([
      [2, 3],
      [1, 2],
    ]);
  });
});

describe("outbox and conflicts store", () => {
  it("appends events in id order and marks them published", async () => {
    const row = await seed();
    await db.transaction((trx) =>
      appendDocumentUpdated(trx, {
        ownerId: OWNER,
        documentId: row.id,
        versionId: row.head_version_id,
        sessionId: "s",
        payload: { kind: "metadata" },
      }),
    );
    const pending = (await unpublishedEvents(db, 1000)).filter((e) => e.document_id === row.id);
    expect(pending.map((e) => e.event_type)).toEqual(["document_created", "document_updated"]);
    await markPublished(
      db,
      pending.map((e) => e.id),
    );
    expect((await unpublishedEvents(db, 1000)).filter((e) => e.document_id === row.id)).toEqual([]);
  });

  it("records conflicts, finds the open ones newest first and resolves them per chunk", async () => {
    const row = await seed();
    const conflict = (id: string) => ({
      id,
      owner_id: OWNER,
      document_id: row.id,
      chunk_id: "c_a",
      kind: "chat",
      session_id: "s",
      base_html: "",
      ours_html: "<p>o</p>",
      theirs_html: "",
      base_version_id: row.head_version_id,
      head_version_id: row.head_version_id,
    });
    const [first, second] = [randomUUID(), randomUUID()];
    await insertConflicts(db, [conflict(first)]);
    await insertConflicts(db, [conflict(second)]);
    expect((await openConflicts(db, OWNER, [row.id], "c_a")).map((c) => c.id)).toEqual([second, first]);
    expect(await openConflicts(db, "other", [row.id], "c_a")).toEqual([]);
    expect((await findConflict(db, OWNER, first))?.ours_html).toBe("<p>o</p>");
    expect(await findConflict(db, "other", first)).toBeUndefined();
    await resolveConflicts(db, row.id, "c_a", row.head_version_id);
    expect(await openConflicts(db, OWNER, [row.id], "c_a")).toEqual([]);
  });
});
