// Small query functions over the documents schema. They take a Knex or a transaction;
// commands open the transactions, stores never do.
import type { Knex } from "@redline/service-kit";
import { SCHEMA } from "./migrations.js";
import type { ChunkRevisionRow, ConflictRow, DocumentRow, OutboxRow, VersionRow } from "./tables.js";

type Db = Knex | Knex.Transaction;
const T = {
  documents: `${SCHEMA}.documents`,
  versions: `${SCHEMA}.versions`,
  chunks: `${SCHEMA}.chunk_revisions`,
  outbox: `${SCHEMA}.outbox`,
  conflicts: `${SCHEMA}.conflicts`,
};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for a UUID string; anything else cannot name a document (and must not reach a uuid column). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
/**
 * Rows per multi-row insert whose columns are bound one parameter each: well under Postgres's
 * 65,535 bind parameters for any of our tables (conflicts have 11 columns).
 */
const INSERT_BATCH = 1000;
/** Rows per unnest() insert of chunk revisions: bounds one statement's size, not its parameters. */
const UNNEST_BATCH = 20_000;

/** The owner's document, or undefined (another owner's id reads as missing). */
export function findDocument(db: Db, ownerId: string, id: string, forUpdate = false): Promise<DocumentRow | undefined> {
  if (!isUuid(id)) return Promise.resolve(undefined);
  const q = db<DocumentRow>(T.documents).where({ id, owner_id: ownerId }).first();
  return forUpdate ? q.forUpdate() : q;
}

/** True when a chunk's HTML is a heading element (it anchors a section). */
export function isHeadingHtml(html: string): boolean {
  return /^\s*<h[1-6][\s>]/i.test(html);
}

/** Moves the document's head to a new version with its counts (and title/page setup when given). */
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

/** Inserts a version row. */
export async function insertVersion(db: Db, row: Omit<VersionRow, "created_at">): Promise<void> {
  await db(T.versions).insert(row);
}

/** A version of the document by id, or undefined. */
export function findVersion(db: Db, documentId: string, versionId: string): Promise<VersionRow | undefined> {
  if (!isUuid(versionId)) return Promise.resolve(undefined);
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

/** Takes the transaction-scoped lock every outbox writer holds from before its id is drawn to commit. */
const OUTBOX_LOCK = "select pg_advisory_xact_lock(hashtext('redline.documents.outbox'))";

/**
 * Appends an event to the outbox. The advisory lock makes outbox ids commit in id order, so a
 * poller reading `id > cursor` never skips an event that commits late.
 */
export async function appendOutbox(
  db: Knex.Transaction,
  row: Omit<OutboxRow, "id" | "created_at" | "published_at">,
): Promise<string> {
  await db.raw(OUTBOX_LOCK);
  const [inserted] = await db(T.outbox)
    .insert({ ...row, payload: JSON.stringify(row.payload) })
    .returning("id");
  return String(inserted.id);
}

/** A new document at version 1, as insertNewDocument writes it. */
export interface NewDocument {
  id: string;
  ownerId: string;
  title: string;
  pageSetup: Record<string, unknown> | null;
  versionId: string;
  sessionId: string;
  sectionCount: number;
  /** Chunks in document order with their fractional positions. */
  chunks: { chunkId: string; html: string; position: string }[];
  /** Payload of the `document_created` event. */
  eventPayload: Record<string, unknown>;
}

/**
 * Writes a new document in ONE statement: the document row, version 1, its chunk revisions and
 * its `document_created` outbox event. Creating a document is on the critical path of every chat
 * turn that loads one, so it costs one round trip (autocommit) instead of eight. The document
 * insert skips an existing id (ON CONFLICT DO NOTHING) and every other insert reads from it, so
 * an id already taken writes nothing at all and answers undefined; otherwise the inserted row.
 */
export async function insertNewDocument(db: Db, doc: NewDocument): Promise<DocumentRow | undefined> {
  // The outbox insert takes the advisory lock in its FROM (OFFSET 0 keeps the subquery from being
  // flattened) so the lock is held before nextval draws the event's id, as in appendOutbox.
  // Chunks travel as three parallel text arrays: no bind-parameter limit, and text is encoded
  // exactly as the column inserts did before.
  const { rows } = await db.raw<{ rows: DocumentRow[] }>(
    `with doc as (
       insert into ${T.documents}
         (id, owner_id, title, page_setup, head_version_id, head_seq, chunk_count, section_count)
       values (?, ?, ?, ?::jsonb, ?, 1, ?, ?)
       on conflict (id) do nothing
       returning *
     ), version as (
       insert into ${T.versions} (id, document_id, seq, parent_id, session_id, kind, summary)
       select ?, doc.id, 1, null, ?, 'create', 'created' from doc
     ), chunks as (
       insert into ${T.chunks} (document_id, chunk_id, position, html, valid_from, valid_to)
       select doc.id, c.chunk_id, c.position, c.html, 1, null
       from doc cross join unnest(?::text[], ?::text[], ?::text[]) as c(chunk_id, position, html)
     ), event as (
       insert into ${T.outbox} (event_type, owner_id, document_id, version_id, session_id, payload)
       select 'document_created', doc.owner_id, doc.id, doc.head_version_id, ?, ?::jsonb
       from doc cross join (${OUTBOX_LOCK} offset 0) lock
     )
     select * from doc`,
    [
      doc.id,
      doc.ownerId,
      doc.title,
      doc.pageSetup ? JSON.stringify(doc.pageSetup) : null,
      doc.versionId,
      doc.chunks.length,
      doc.sectionCount,
      doc.versionId,
      doc.sessionId,
      doc.chunks.map((c) => c.chunkId),
      doc.chunks.map((c) => c.position),
      doc.chunks.map((c) => c.html),
      doc.sessionId,
      JSON.stringify(doc.eventPayload),
    ],
  );
  return rows[0];
}

/** The oldest `limit` outbox rows not yet published to NATS, in id order. */
export function unpublishedEvents(db: Db, limit: number): Promise<OutboxRow[]> {
  return db<OutboxRow>(T.outbox).whereNull("published_at").orderBy("id", "asc").limit(limit);
}

/** Marks outbox rows as published (after JetStream acked them). */
export async function markPublished(db: Db, ids: string[]): Promise<void> {
  await db(T.outbox).whereIn("id", ids).update({ published_at: db.fn.now() });
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

/** A page of the owner's documents, most recently updated first, and the total. */
export async function listDocuments(
  db: Db,
  ownerId: string,
  page: { limit: number; offset: number; archived: boolean },
): Promise<{ rows: DocumentRow[]; total: number }> {
  const base = () => {
    const q = db<DocumentRow>(T.documents).where({ owner_id: ownerId });
    return page.archived ? q.whereNotNull("archived_at") : q.whereNull("archived_at");
  };
  const [rows, [count]] = await Promise.all([
    base()
      .orderBy([
        { column: "updated_at", order: "desc" },
        { column: "id", order: "asc" },
      ])
      .limit(page.limit)
      .offset(page.offset),
    base().count<{ count: string }[]>("* as count"),
  ]);
  return { rows, total: Number(count?.count ?? 0) };
}

/** The owner's documents among `ids` (non-UUIDs and foreign ids are skipped). */
export function findDocuments(db: Db, ownerId: string, ids: string[]): Promise<DocumentRow[]> {
  const valid = [...new Set(ids.filter(isUuid))];
  if (valid.length === 0) return Promise.resolve([]);
  return db<DocumentRow>(T.documents).where({ owner_id: ownerId }).whereIn("id", valid);
}

/** Sets or clears archived_at and bumps updated_at. */
export async function setArchived(db: Db, id: string, archived: boolean): Promise<void> {
  await db(T.documents)
    .where({ id })
    .update({ archived_at: archived ? db.fn.now() : null, updated_at: db.fn.now() });
}

/** Updates title and/or page setup and bumps updated_at. */
export async function updateMeta(
  db: Db,
  id: string,
  fields: { title?: string; pageSetup?: Record<string, unknown> | null },
): Promise<void> {
  await db(T.documents)
    .where({ id })
    .update({
      updated_at: db.fn.now(),
      ...(fields.title !== undefined ? { title: fields.title } : {}),
      ...(fields.pageSetup !== undefined
        ? { page_setup: fields.pageSetup ? JSON.stringify(fields.pageSetup) : null }
        : {}),
    });
}

/** Outbox events of the owner's documents after `afterId`, ascending; one more than `limit` tells has_more. */
export function eventsAfter(
  db: Db,
  ownerId: string,
  q: { documentIds: string[]; afterId: number; excludeSessionId: string; types: string[]; limit: number },
): Promise<OutboxRow[]> {
  const ids = [...new Set(q.documentIds.filter(isUuid))];
  if (ids.length === 0) return Promise.resolve([]);
  const query = db<OutboxRow>(T.outbox)
    .where({ owner_id: ownerId })
    .whereIn("document_id", ids)
    .whereIn("event_type", q.types)
    .where("id", ">", q.afterId);
  if (q.excludeSessionId) query.whereNot({ session_id: q.excludeSessionId });
  return query.orderBy("id", "asc").limit(q.limit + 1);
}

/**
 * Records concurrent writes that lost to another session's change of the same chunk, in
 * batches of 1,000 rows (11 parameters each; a save may clash on every chunk). Not atomic
 * across batches unless `db` is a transaction.
 */
export async function insertConflicts(
  db: Db,
  rows: Omit<ConflictRow, "created_at" | "resolved_at" | "resolved_version_id">[],
): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_BATCH) await db(T.conflicts).insert(rows.slice(i, i + INSERT_BATCH));
}

/** Unresolved conflicts of one chunk in the owner's documents, newest first. */
export function openConflicts(db: Db, ownerId: string, documentIds: string[], chunkId: string): Promise<ConflictRow[]> {
  const ids = [...new Set(documentIds.filter(isUuid))];
  if (ids.length === 0) return Promise.resolve([]);
  return db<ConflictRow>(T.conflicts)
    .where({ owner_id: ownerId, chunk_id: chunkId })
    .whereIn("document_id", ids)
    .whereNull("resolved_at")
    .orderBy("created_at", "desc");
}

/** The owner's conflict by id, or undefined. */
export function findConflict(db: Db, ownerId: string, id: string): Promise<ConflictRow | undefined> {
  if (!isUuid(id)) return Promise.resolve(undefined);
  return db<ConflictRow>(T.conflicts).where({ id, owner_id: ownerId }).first();
}

/** Marks every open conflict of a chunk resolved by `versionId`. */
export async function resolveConflicts(db: Db, documentId: string, chunkId: string, versionId: string): Promise<void> {
  await db(T.conflicts)
    .where({ document_id: documentId, chunk_id: chunkId })
    .whereNull("resolved_at")
    .update({ resolved_at: db.fn.now(), resolved_version_id: versionId });
}
