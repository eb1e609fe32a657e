// Small query functions over the documents schema. They take a Knex or a transaction;
// commands open the transactions, stores never do.
import type { Knex } from "@redline/service-kit";
import { SCHEMA } from "./migrations.js";
import type { ChunkRevisionRow, DocumentRow, OutboxRow, VersionRow } from "./tables.js";

type Db = Knex | Knex.Transaction;
const T = {
  documents: `${SCHEMA}.documents`,
  versions: `${SCHEMA}.versions`,
  chunks: `${SCHEMA}.chunk_revisions`,
  outbox: `${SCHEMA}.outbox`,
};
const INSERT_BATCH = 500;

/** The owner's document, or undefined (another owner's id reads as missing). */
export function findDocument(db: Db, ownerId: string, id: string, forUpdate = false): Promise<DocumentRow | undefined> {
  const q = db<DocumentRow>(T.documents).where({ id, owner_id: ownerId }).first();
  return forUpdate ? q.forUpdate() : q;
}

/** True when a chunk's HTML is a heading element (it anchors a section). */
export function isHeadingHtml(html: string): boolean {
  return /^\s*<h[1-6][\s>]/i.test(html);
}

export async function insertDocument(
  db: Db,
  row: Omit<DocumentRow, "created_at" | "updated_at" | "archived_at">,
): Promise<void> {
  await db(T.documents).insert({ ...row, page_setup: row.page_setup ? JSON.stringify(row.page_setup) : null });
}

export async function updateHead(
  db: Db,
  id: string,
  head: {
    versionId: string;
    seq: number;
    chunkCount: number;
    sectionCount: number;
    title?: string;
    pageSetup?: Record<string, unknown> | null;
  },
): Promise<void> {
  await db(T.documents)
    .where({ id })
    .update({
      head_version_id: head.versionId,
      head_seq: head.seq,
      chunk_count: head.chunkCount,
      section_count: head.sectionCount,
      updated_at: db.fn.now(),
      ...(head.title !== undefined ? { title: head.title } : {}),
      ...(head.pageSetup !== undefined ? { page_setup: head.pageSetup ? JSON.stringify(head.pageSetup) : null } : {}),
    });
}

export async function insertVersion(db: Db, row: Omit<VersionRow, "created_at">): Promise<void> {
  await db(T.versions).insert(row);
}

export function findVersion(db: Db, documentId: string, versionId: string): Promise<VersionRow | undefined> {
  return db<VersionRow>(T.versions).where({ document_id: documentId, id: versionId }).first();
}

/** Chunks live at version `seq` (head when omitted), in document order. */
export function chunksAt(
  db: Db,
  documentId: string,
  seq?: number,
): Promise<Pick<ChunkRevisionRow, "chunk_id" | "html" | "position">[]> {
  const q = db<ChunkRevisionRow>(T.chunks).select("chunk_id", "html", "position").where({ document_id: documentId });
  if (seq === undefined) q.whereNull("valid_to");
  else q.where("valid_from", "<=", seq).andWhere((w) => w.whereNull("valid_to").orWhere("valid_to", ">", seq));
  return q.orderBy("position", "asc");
}

/** Live revisions of the given chunk ids (O(k) with the partial unique index). */
export function liveChunks(db: Db, documentId: string, chunkIds: string[]): Promise<ChunkRevisionRow[]> {
  if (chunkIds.length === 0) return Promise.resolve([]);
  return db<ChunkRevisionRow>(T.chunks)
    .where({ document_id: documentId })
    .whereNull("valid_to")
    .whereIn("chunk_id", chunkIds);
}

/** Position of the first live chunk after `position`, or null at the end. */
export async function nextLivePosition(db: Db, documentId: string, position: string | null): Promise<string | null> {
  const q = db<ChunkRevisionRow>(T.chunks).select("position").where({ document_id: documentId }).whereNull("valid_to");
  if (position !== null) q.where("position", ">", position);
  const row = await q.orderBy("position", "asc").first();
  return row?.position ?? null;
}

/** Chunk ids that got a revision or were closed after version `seq`. */
export async function chunksChangedSince(db: Db, documentId: string, seq: number): Promise<Set<string>> {
  const rows = await db<ChunkRevisionRow>(T.chunks)
    .distinct("chunk_id")
    .where({ document_id: documentId })
    .andWhere((w) => w.where("valid_from", ">", seq).orWhere("valid_to", ">", seq));
  return new Set(rows.map((r) => r.chunk_id));
}

export async function insertRevisions(db: Db, rows: ChunkRevisionRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_BATCH) await db(T.chunks).insert(rows.slice(i, i + INSERT_BATCH));
}

/** Closes the live revisions of `chunkIds` at version `seq`. */
export async function closeRevisions(db: Db, documentId: string, chunkIds: string[], seq: number): Promise<void> {
  for (let i = 0; i < chunkIds.length; i += INSERT_BATCH) {
    await db(T.chunks)
      .where({ document_id: documentId })
      .whereNull("valid_to")
      .whereIn("chunk_id", chunkIds.slice(i, i + INSERT_BATCH))
      .update({ valid_to: seq });
  }
}

/**
 * Appends an event to the outbox. The advisory lock makes outbox ids commit in id order, so a
 * poller reading `id > cursor` never skips an event that commits late.
 */
export async function appendOutbox(
  db: Knex.Transaction,
  row: Omit<OutboxRow, "id" | "created_at" | "published_at">,
): Promise<string> {
  await db.raw("select pg_advisory_xact_lock(hashtext('redline.documents.outbox'))");
  const [inserted] = await db(T.outbox)
    .insert({ ...row, payload: JSON.stringify(row.payload) })
    .returning("id");
  return String(inserted.id);
}

export function unpublishedEvents(db: Db, limit: number): Promise<OutboxRow[]> {
  return db<OutboxRow>(T.outbox).whereNull("published_at").orderBy("id", "asc").limit(limit);
}

export async function markPublished(db: Db, ids: string[]): Promise<void> {
  await db(T.outbox).whereIn("id", ids).update({ published_at: db.fn.now() });
}
