// SQL of the expired-file sweep (commands/retention.ts) over ingest.uploads, ingest.exports,
// ingest.attachments and ingest.document_sources: which stored objects no link or row can reach
// any more (for originals: which to ask documents about), and the record that they were removed.
// Times are the database's clock, as every ingest process counts alike.
import type { Knex } from "@redline/service-kit";

/** A stored object the sweep may remove, and the row it belongs to. */
export interface ExpiredObject {
  id: string;
  object_key: string;
}

/** Seconds in an interval literal: `n` is one of our constants, never a caller's input. */
const seconds = (n: number) => `${Math.trunc(n)} seconds`;

/** Up to `limit` upload slots that expired more than `graceSeconds` ago, oldest first. */
export async function expiredUploads(db: Knex, graceSeconds: number, limit: number): Promise<ExpiredObject[]> {
  return db("uploads")
    .where("expires_at", "<", db.raw("now() - ?::interval", [seconds(graceSeconds)]))
    .orderBy("expires_at")
    .limit(limit)
    .select("id", "object_key");
}

/** Drops upload slots whose object is gone. */
export async function deleteUploads(db: Knex, ids: string[]): Promise<void> {
  if (ids.length > 0) await db("uploads").whereIn("id", ids).delete();
}

/**
 * Up to `limit` exports whose file is still stored and whose link expired more than
 * `graceSeconds` ago: a download's `downloadSeconds` after it was stored (created_at), a mailed
 * export's `emailSeconds` after its outcome was recorded (updated_at, just after the link was
 * signed; a failed mail's file too, since the mail may have gone out).
 */
export async function expiredExports(
  db: Knex,
  link: { downloadSeconds: number; emailSeconds: number },
  graceSeconds: number,
  limit: number,
): Promise<(ExpiredObject & { kind: "download" | "email" })[]> {
  const grace = seconds(graceSeconds);
  return (
    db("exports")
      .where("object_key", "<>", "")
      .whereNull("object_removed_at")
      // Parenthesized whole: knex adds a raw condition after "and" as written, and "and" binds
      // tighter than "or".
      .whereRaw(
        `((kind = 'download' and created_at + ?::interval < now() - ?::interval)
        or (kind = 'email' and updated_at + ?::interval < now() - ?::interval))`,
        [seconds(link.downloadSeconds), grace, seconds(link.emailSeconds), grace],
      )
      .orderBy("created_at")
      .limit(limit)
      .select("id", "object_key", "kind")
  );
}

/** Records that these exports' files were removed. */
export async function markExportsRemoved(db: Knex, ids: string[]): Promise<void> {
  if (ids.length > 0) await db("exports").whereIn("id", ids).update({ object_removed_at: db.fn.now() });
}

/** Up to `limit` deleted attachments whose bytes are still stored, earliest deleted first. */
export async function deletedAttachmentObjects(db: Knex, limit: number): Promise<ExpiredObject[]> {
  return db("attachments")
    .whereNotNull("deleted_at")
    .whereNull("object_removed_at")
    .orderBy("deleted_at")
    .limit(limit)
    .select("id", "object_key");
}

/** Records that these deleted attachments' bytes were removed. */
export async function markAttachmentsRemoved(db: Knex, ids: string[]): Promise<void> {
  if (ids.length > 0) await db("attachments").whereIn("id", ids).update({ object_removed_at: db.fn.now() });
}

/** A stored original the sweep asks documents about: its owner and both of its objects. */
export interface SourceToCheck extends ExpiredObject {
  owner_id: string;
  map_key: string;
}

/**
 * Up to `limit` stored originals older than `graceSeconds` that were never checked or last
 * checked more than `recheckSeconds` ago, never-checked first, then oldest.
 */
export async function sourcesToCheck(
  db: Knex,
  graceSeconds: number,
  recheckSeconds: number,
  limit: number,
): Promise<SourceToCheck[]> {
  return db("document_sources")
    .where("created_at", "<", db.raw("now() - ?::interval", [seconds(graceSeconds)]))
    .andWhere((w) =>
      w.whereNull("checked_at").orWhere("checked_at", "<", db.raw("now() - ?::interval", [seconds(recheckSeconds)])),
    )
    .orderByRaw("checked_at asc nulls first, created_at")
    .limit(limit)
    .select("id", "owner_id", "object_key", "map_key");
}

/** Records that a document still names these originals. */
export async function markSourcesChecked(db: Knex, ids: string[]): Promise<void> {
  if (ids.length > 0) await db("document_sources").whereIn("id", ids).update({ checked_at: db.fn.now() });
}

/** Drops originals whose objects are gone. */
export async function deleteSources(db: Knex, ids: string[]): Promise<void> {
  if (ids.length > 0) await db("document_sources").whereIn("id", ids).delete();
}
