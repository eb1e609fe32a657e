// SQL of documents.chunk_revisions: a row per revision of a chunk, live for valid_from <= seq < valid_to.
import type { ChunkRecord } from "@redline/html-chunks";
import { type ChunkRevisionRow, type Db, TABLES as T, type VersionRow } from "../tables.js";

/** Rows per unnest() insert of chunk revisions: bounds one statement's size, not its parameters. */
const UNNEST_BATCH = 20_000;

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

/** The chunks of version `seq` (head when omitted) as records, in document order. */
export async function chunkRecordsAt(db: Db, documentId: string, seq?: number): Promise<ChunkRecord[]> {
  return (await chunksAt(db, documentId, seq)).map((r) => ({ chunkId: r.chunk_id, html: r.html }));
}

/** Live revisions of the given chunk ids (O(k) with the partial unique index). */
export function liveChunks(db: Db, documentId: string, chunkIds: string[]): Promise<ChunkRevisionRow[]> {
  if (chunkIds.length === 0) return Promise.resolve([]);
  // One array parameter, not one per id: a save may touch every chunk of a 100k-chunk document.
  return db<ChunkRevisionRow>(T.chunks)
    .where({ document_id: documentId })
    .whereNull("valid_to")
    .whereRaw("chunk_id = any(?::text[])", [chunkIds]);
}

/** Position of the first live chunk after `position`, or null at the end. */
export async function nextLivePosition(db: Db, documentId: string, position: string | null): Promise<string | null> {
  const q = db<ChunkRevisionRow>(T.chunks).select("position").where({ document_id: documentId }).whereNull("valid_to");
  if (position !== null) q.where("position", ">", position);
  const row = await q.orderBy("position", "asc").first();
  return row?.position ?? null;
}

/** Positions of the live chunks in order (C collation), for commits with many inserts. */
export async function livePositions(db: Db, documentId: string): Promise<string[]> {
  const rows = await db<ChunkRevisionRow>(T.chunks)
    .select("position")
    .where({ document_id: documentId })
    .whereNull("valid_to")
    .orderBy("position", "asc");
  return rows.map((r) => r.position);
}

/** Chunk ids that got a revision or were closed after version `seq`. */
export async function chunksChangedSince(db: Db, documentId: string, seq: number): Promise<Set<string>> {
  const rows = await db<ChunkRevisionRow>(T.chunks)
    .distinct("chunk_id")
    .where({ document_id: documentId })
    .andWhere((w) => w.where("valid_from", ">", seq).orWhere("valid_to", ">", seq));
  return new Set(rows.map((r) => r.chunk_id));
}

/**
 * Of the chunks changed after version `seq`, those whose every change since was made by a save
 * of `sessionId` (none when no such save is among those versions, the common case: one read).
 */
export async function chunksChangedOnlyBySaves(
  db: Db,
  documentId: string,
  seq: number,
  sessionId: string,
): Promise<Set<string>> {
  const versions = await db<VersionRow>(T.versions)
    .select("seq", "session_id", "writer")
    .where({ document_id: documentId })
    .andWhere("seq", ">", seq);
  const own = versions.filter((v) => v.session_id === sessionId && v.writer === "save").map((v) => v.seq);
  if (own.length === 0) return new Set();
  const others = versions.filter((v) => !(v.session_id === sessionId && v.writer === "save")).map((v) => v.seq);
  const [byOwn, byOthers] = await Promise.all([
    chunksChangedAt(db, documentId, own),
    chunksChangedAt(db, documentId, others),
  ]);
  return new Set([...byOwn].filter((id) => !byOthers.has(id)));
}

/** Chunk ids that got a revision or were closed at one of the versions `seqs`. */
async function chunksChangedAt(db: Db, documentId: string, seqs: number[]): Promise<Set<string>> {
  if (seqs.length === 0) return new Set();
  const rows = await db<ChunkRevisionRow>(T.chunks)
    .distinct("chunk_id")
    .where({ document_id: documentId })
    .andWhere((w) => w.whereRaw("valid_from = any(?::int[])", [seqs]).orWhereRaw("valid_to = any(?::int[])", [seqs]));
  return new Set(rows.map((r) => r.chunk_id));
}

/**
 * Inserts chunk revision rows. Columns travel as parallel arrays through unnest(), six bind
 * parameters per statement whatever the row count (a multi-row VALUES list hits Postgres's
 * 65,535-parameter limit near 11k rows); statements hold at most 20,000 rows each.
 */
export async function insertRevisions(db: Db, rows: ChunkRevisionRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += UNNEST_BATCH) {
    const batch = rows.slice(i, i + UNNEST_BATCH);
    await db.raw(
      `insert into ${T.chunks} (document_id, chunk_id, position, html, valid_from, valid_to)
       select * from unnest(?::uuid[], ?::text[], ?::text[], ?::text[], ?::int[], ?::int[])`,
      [
        batch.map((r) => r.document_id),
        batch.map((r) => r.chunk_id),
        batch.map((r) => r.position),
        batch.map((r) => r.html),
        batch.map((r) => r.valid_from),
        batch.map((r) => r.valid_to),
      ],
    );
  }
}

/** Closes the live revisions of `chunkIds` at version `seq` (one statement, one array parameter). */
export async function closeRevisions(db: Db, documentId: string, chunkIds: string[], seq: number): Promise<void> {
  if (chunkIds.length === 0) return;
  await db(T.chunks)
    .where({ document_id: documentId })
    .whereNull("valid_to")
    .whereRaw("chunk_id = any(?::text[])", [chunkIds])
    .update({ valid_to: seq });
}
/** The most recent revision of a chunk, live or closed (a deleted chunk keeps its place in the order). */
export function lastRevision(db: Db, documentId: string, chunkId: string): Promise<ChunkRevisionRow | undefined> {
  return db<ChunkRevisionRow>(T.chunks)
    .where({ document_id: documentId, chunk_id: chunkId })
    .orderBy("valid_from", "desc")
    .first();
}

/** Revisions of the given chunks live at version `seq`. */
export function chunksAtSeq(db: Db, documentId: string, seq: number, chunkIds: string[]): Promise<ChunkRevisionRow[]> {
  if (chunkIds.length === 0) return Promise.resolve([]);
  return db<ChunkRevisionRow>(T.chunks)
    .where({ document_id: documentId })
    .whereRaw("chunk_id = any(?::text[])", [chunkIds])
    .where("valid_from", "<=", seq)
    .andWhere((w) => w.whereNull("valid_to").orWhere("valid_to", ">", seq));
}

/** The first `limit` chunks at head (previews). */
export function headChunks(
  db: Db,
  documentId: string,
  limit: number,
): Promise<Pick<ChunkRevisionRow, "chunk_id" | "html">[]> {
  return db<ChunkRevisionRow>(T.chunks)
    .select("chunk_id", "html")
    .where({ document_id: documentId })
    .whereNull("valid_to")
    .orderBy("position", "asc")
    .limit(limit);
}

/** Live chunks in document order with the version that wrote each (valid_from). */
export function liveChunksWithSeq(
  db: Db,
  documentId: string,
): Promise<Pick<ChunkRevisionRow, "chunk_id" | "html" | "valid_from">[]> {
  return db<ChunkRevisionRow>(T.chunks)
    .select("chunk_id", "html", "valid_from")
    .where({ document_id: documentId })
    .whereNull("valid_to")
    .orderBy("position", "asc");
}

/** For chunks no longer live: the version that closed each one's last revision (its delete). */
export async function deletingSeqs(db: Db, documentId: string, chunkIds: string[]): Promise<Map<string, number>> {
  if (chunkIds.length === 0) return new Map();
  const rows = await db<ChunkRevisionRow>(T.chunks)
    .select("chunk_id")
    .max<{ chunk_id: string; seq: number }[]>("valid_to as seq")
    .where({ document_id: documentId })
    .whereRaw("chunk_id = any(?::text[])", [chunkIds])
    .groupBy("chunk_id");
  return new Map(rows.map((r) => [r.chunk_id, Number(r.seq)]));
}
