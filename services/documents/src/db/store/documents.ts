// SQL of the documents table: find, list, create (one statement), head moves, metadata, archive state.
import { isUuid, uuidsOf } from "@redline/service-kit";
import { type Db, type DocumentRow, TABLES as T, type VersionAuthor } from "../tables.js";
import { OUTBOX_LOCK } from "./outbox.js";

/** The jsonb value of a page setup: undefined keeps the column, null clears it. */
function pageSetupColumn(pageSetup: Record<string, unknown> | null | undefined): { page_setup?: string | null } {
  if (pageSetup === undefined) return {};
  return { page_setup: pageSetup ? JSON.stringify(pageSetup) : null };
}

/** The owner's document, or undefined (another owner's id reads as missing). */
export function findDocument(db: Db, ownerId: string, id: string, forUpdate = false): Promise<DocumentRow | undefined> {
  if (!isUuid(id)) return Promise.resolve(undefined);
  const q = db<DocumentRow>(T.documents).where({ id, owner_id: ownerId }).first();
  return forUpdate ? q.forUpdate() : q;
}
/** Updates the document row (bumping updated_at) and returns it as it is now. */
async function updateRow(db: Db, id: string, fields: Record<string, unknown>): Promise<DocumentRow> {
  const [row] = await db<DocumentRow>(T.documents)
    .where({ id })
    .update({ ...fields, updated_at: db.fn.now() })
    .returning("*");
  return row;
}

/** Moves the document's head to a new version with its counts (and title/page setup when given); the row after. */
export function updateHead(
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
): Promise<DocumentRow> {
  return updateRow(db, id, {
    head_version_id: head.versionId,
    head_seq: head.seq,
    chunk_count: head.chunkCount,
    section_count: head.sectionCount,
    ...(head.title !== undefined ? { title: head.title } : {}),
    ...pageSetupColumn(head.pageSetup),
  });
}
/** A new document at version 1, as insertNewDocument writes it. */
export interface NewDocument {
  id: string;
  ownerId: string;
  title: string;
  pageSetup: Record<string, unknown> | null;
  versionId: string;
  sessionId: string;
  /** Who version 1 is attributed to. */
  author: VersionAuthor;
  sectionCount: number;
  /** Chunks in document order with their fractional positions. */
  chunks: { chunkId: string; html: string; position: string }[];
  /** Payload of the `document_created` event. */
  eventPayload: Record<string, unknown>;
  /** The original file it is loaded from (loaded as version 1); none when absent. */
  source?: DocumentSourceRef | null;
  /** The creating RPC's span (traceparentOf(call.trace)), kept on the event as appendOutbox does. */
  traceparent?: string | null;
}

/** A document's original file, as ingest keeps it. */
export interface DocumentSourceRef {
  sourceId: string;
  format: string;
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
         (id, owner_id, title, page_setup, head_version_id, head_seq, chunk_count, section_count,
          source_id, source_format, source_seq)
       values (?, ?, ?, ?::jsonb, ?, 1, ?, ?, ?, ?, ?::integer)
       on conflict (id) do nothing
       returning *
     ), version as (
       insert into ${T.versions} (id, document_id, seq, parent_id, session_id, kind, summary, author, author_kind)
       select ?, doc.id, 1, null, ?, 'create', 'created', ?, ? from doc
     ), chunks as (
       insert into ${T.chunks} (document_id, chunk_id, position, html, valid_from, valid_to)
       select doc.id, c.chunk_id, c.position, c.html, 1, null
       from doc cross join unnest(?::text[], ?::text[], ?::text[]) as c(chunk_id, position, html)
     ), event as (
       insert into ${T.outbox} (event_type, owner_id, document_id, version_id, session_id, payload, traceparent)
       select 'document_created', doc.owner_id, doc.id, doc.head_version_id, ?, ?::jsonb, ?
       from doc cross join (${OUTBOX_LOCK} offset 0) lock
     )
     select * from doc`,
    [
      doc.id,
      doc.ownerId,
      doc.title,
      pageSetupColumn(doc.pageSetup).page_setup ?? null,
      doc.versionId,
      doc.chunks.length,
      doc.sectionCount,
      doc.source?.sourceId ?? null,
      doc.source?.format ?? null,
      doc.source ? 1 : null,
      doc.versionId,
      doc.sessionId,
      doc.author.name,
      doc.author.kind,
      doc.chunks.map((c) => c.chunkId),
      doc.chunks.map((c) => c.position),
      doc.chunks.map((c) => c.html),
      doc.sessionId,
      JSON.stringify(doc.eventPayload),
      doc.traceparent ?? null,
    ],
  );
  return rows[0];
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
  const valid = uuidsOf(ids);
  if (valid.length === 0) return Promise.resolve([]);
  return db<DocumentRow>(T.documents).where({ owner_id: ownerId }).whereIn("id", valid);
}

/** Sets or clears archived_at and bumps updated_at; the row after. */
export function setArchived(db: Db, id: string, archived: boolean): Promise<DocumentRow> {
  return updateRow(db, id, { archived_at: archived ? db.fn.now() : null });
}

/** Records the original the head version was loaded from (null: it has none); the row after. */
export function setSource(db: Db, id: string, source: DocumentSourceRef | null, seq: number): Promise<DocumentRow> {
  return updateRow(db, id, {
    source_id: source?.sourceId ?? null,
    source_format: source?.format ?? null,
    source_seq: source ? seq : null,
  });
}

/** Of `sourceIds`, those some document of `ownerId` (archived ones too) names as its original. */
export async function referencedSources(db: Db, ownerId: string, sourceIds: string[]): Promise<string[]> {
  if (sourceIds.length === 0) return [];
  const rows = await db<DocumentRow>(T.documents)
    .distinct("source_id")
    .where({ owner_id: ownerId })
    .whereRaw("source_id = any(?::text[])", [sourceIds]);
  return rows.map((r) => r.source_id as string);
}

/** Updates title and/or page setup and bumps updated_at; the row after. */
export function updateMeta(
  db: Db,
  id: string,
  fields: { title?: string; pageSetup?: Record<string, unknown> | null },
): Promise<DocumentRow> {
  return updateRow(db, id, {
    ...(fields.title !== undefined ? { title: fields.title } : {}),
    ...pageSetupColumn(fields.pageSetup),
  });
}
