// SQL of ingest.attachments and ingest.attachment_chunks (deleted_at set: gone for every read).
import type { Knex } from "@redline/service-kit";
import type { AttachmentRow } from "../tables.js";

type Db = Knex | Knex.Transaction;

/** One stored passage with its attachment's filename. */
export interface PassageRow {
  attachment_id: string;
  filename: string;
  seq: number;
  text: string;
}

/** Stores a pending attachment and returns its row. */
export async function insertAttachment(
  db: Db,
  row: Pick<
    AttachmentRow,
    "id" | "owner_id" | "session_id" | "filename" | "content_type" | "kind" | "size_bytes" | "object_key" | "status"
  >,
): Promise<AttachmentRow> {
  const [stored] = await db<AttachmentRow>("attachments").insert(row).returning("*");
  return stored;
}

/** The session's live attachments of one owner, oldest first. */
export function listAttachments(db: Db, ownerId: string, sessionId: string): Promise<AttachmentRow[]> {
  return db<AttachmentRow>("attachments")
    .where({ owner_id: ownerId, session_id: sessionId })
    .whereNull("deleted_at")
    .orderBy([{ column: "created_at" }, { column: "id" }]);
}

/** The owner's live attachment; undefined when unknown, deleted or another owner's. */
export function findAttachment(db: Db, ownerId: string, id: string): Promise<AttachmentRow | undefined> {
  return db<AttachmentRow>("attachments").where({ id, owner_id: ownerId }).whereNull("deleted_at").first();
}

const UNFINISHED: AttachmentRow["status"][] = ["pending", "processing"];

/** Which attachment jobs to read: one owner's, optionally of one session and in some row states. */
export interface AttachmentJobFilter {
  ownerId: string;
  /** Only this session's; undefined = every session of the owner. */
  sessionId?: string;
  /** Only deleted (true) or live (false) rows in these states; undefined = every visible job. */
  rows?: { deleted: boolean; statuses: AttachmentRow["status"][] };
  /** Seconds a job stays visible after its last status change once it ended. */
  retentionSeconds: number;
}

/**
 * The attachment rows whose job is visible: live ones still pending or processing; and, ended
 * less than `retentionSeconds` ago (updated_at), live ones completed or failed and deleted ones
 * that were pending or processing (cancelled). An attachment deleted after it ended has no job.
 */
function visibleJobs(db: Db, filter: AttachmentJobFilter) {
  const q = db<AttachmentRow>("attachments")
    .where({ owner_id: filter.ownerId })
    .where((open) =>
      open
        .where((live) => live.whereNull("deleted_at").whereIn("status", UNFINISHED))
        .orWhere((ended) =>
          ended
            .whereRaw("updated_at > now() - make_interval(secs => ?)", [filter.retentionSeconds])
            .where((kept) => kept.whereNull("deleted_at").orWhereIn("status", UNFINISHED)),
        ),
    );
  if (filter.sessionId) q.andWhere({ session_id: filter.sessionId });
  if (filter.rows) {
    q.whereIn("status", filter.rows.statuses);
    if (filter.rows.deleted) q.whereNotNull("deleted_at");
    else q.whereNull("deleted_at");
  }
  return q;
}

/** Up to `limit` visible attachment jobs of the filter (see visibleJobs), newest first (created_at, then id). */
export function listAttachmentJobs(db: Db, filter: AttachmentJobFilter, limit: number): Promise<AttachmentRow[]> {
  return visibleJobs(db, filter)
    .orderBy([
      { column: "created_at", order: "desc" },
      { column: "id", order: "desc" },
    ])
    .limit(limit);
}

/** The owner's attachment `id` when its job is visible (see visibleJobs); undefined otherwise. */
export function findAttachmentJob(db: Db, filter: AttachmentJobFilter, id: string): Promise<AttachmentRow | undefined> {
  return visibleJobs(db, filter).where({ id }).first();
}

/** Ids of live attachments left pending or processing. */
export async function unfinishedAttachmentIds(db: Db): Promise<string[]> {
  const rows = await db<AttachmentRow>("attachments")
    .whereIn("status", UNFINISHED)
    .whereNull("deleted_at")
    .select("id");
  return rows.map((r) => r.id);
}

/** Marks a live pending or processing attachment as processing; undefined when there is none to claim. */
export async function claimAttachment(db: Db, id: string): Promise<AttachmentRow | undefined> {
  const [row] = await db<AttachmentRow>("attachments")
    .where({ id })
    .whereIn("status", ["pending", "processing"])
    .whereNull("deleted_at")
    .update({ status: "processing", updated_at: db.fn.now() })
    .returning("*");
  return row;
}

/** Locks the live attachment row for the transaction; false when it was deleted. */
export async function lockLiveAttachment(tx: Knex.Transaction, id: string): Promise<boolean> {
  return (
    (await tx<AttachmentRow>("attachments").where({ id }).whereNull("deleted_at").forUpdate().first()) !== undefined
  );
}

/** Marks the attachment failed with `error`. */
export async function failAttachment(tx: Db, id: string, error: string): Promise<void> {
  await tx<AttachmentRow>("attachments").where({ id }).update({ status: "failed", error, updated_at: tx.fn.now() });
}

/** Stores the chunk texts (in order) and marks the attachment completed with their counts. */
export async function completeAttachment(tx: Db, id: string, texts: string[]): Promise<void> {
  // Batches of 1,000 rows (3 parameters each): a long document has more chunks than
  // Postgres's 65,535 bind parameters allow in one statement; the caller's transaction keeps them atomic.
  const rows = texts.map((text, seq) => ({ attachment_id: id, seq, text }));
  for (let i = 0; i < rows.length; i += 1000) await tx("attachment_chunks").insert(rows.slice(i, i + 1000));
  await tx<AttachmentRow>("attachments")
    .where({ id })
    .update({
      status: "completed",
      text_length: texts.reduce((n, t) => n + t.length, 0),
      chunk_count: texts.length,
      updated_at: tx.fn.now(),
    });
}

/** Soft-deletes the attachment and drops its chunk texts. */
export async function softDeleteAttachment(tx: Db, id: string): Promise<void> {
  await tx<AttachmentRow>("attachments").where({ id }).update({ deleted_at: tx.fn.now(), updated_at: tx.fn.now() });
  await tx("attachment_chunks").where({ attachment_id: id }).delete();
}

/** Which completed attachments of one owner's session a search reads; `filename` filters by substring. */
export interface AttachmentScope {
  ownerId: string;
  sessionId: string;
  filename: string;
}

const completed = (db: Db, scope: AttachmentScope) =>
  db<AttachmentRow>("attachments")
    .where({ owner_id: scope.ownerId, session_id: scope.sessionId, status: "completed" })
    .whereNull("deleted_at");

/**
 * Up to `limit` passages of the scope's completed attachments: with a `query`, those matching it
 * (websearch syntax, 'simple' configuration) by rank; else the first passages in attachment order.
 */
export function searchPassages(db: Db, scope: AttachmentScope, query: string, limit: number): Promise<PassageRow[]> {
  const q = db("attachment_chunks as c")
    .join("attachments as a", "a.id", "c.attachment_id")
    .where({ "a.owner_id": scope.ownerId, "a.session_id": scope.sessionId, "a.status": "completed" })
    .whereNull("a.deleted_at")
    .select<PassageRow[]>("c.attachment_id", "a.filename", "c.seq", "c.text")
    .limit(limit);
  if (scope.filename) q.whereILike("a.filename", `%${scope.filename.replace(/[\\%_]/g, "\\$&")}%`);
  if (!query) return q.orderBy([{ column: "a.created_at" }, { column: "c.seq" }]);
  return q
    .whereRaw("c.tsv @@ websearch_to_tsquery('simple', ?)", [query])
    .orderByRaw("ts_rank(c.tsv, websearch_to_tsquery('simple', ?)) desc, c.seq", [query]);
}

/** How many completed attachments the session has (the filename filter does not apply). */
export async function countCompleted(db: Db, scope: AttachmentScope): Promise<number> {
  const [{ count }] = await completed(db, scope).count<{ count: string }[]>("* as count");
  return Number(count);
}

/** The session's first `limit` completed image attachments of at most `maxBytes`, oldest first. */
export function visionImages(
  db: Db,
  scope: AttachmentScope,
  maxBytes: number,
  limit: number,
): Promise<AttachmentRow[]> {
  return completed(db, scope)
    .where({ kind: "image" })
    .where("size_bytes", "<=", maxBytes)
    .orderBy("created_at")
    .limit(limit);
}
