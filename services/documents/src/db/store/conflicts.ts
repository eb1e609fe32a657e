// SQL of documents.conflicts: writes that lost to another session's change, kept until re-edit.
import { isUuid, uuidsOf } from "@redline/service-kit";
import { type ConflictRow, type Db, TABLES as T } from "../tables.js";

/**
 * Rows per multi-row insert whose columns are bound one parameter each: well under Postgres's
 * 65,535 bind parameters (conflicts have 11 columns).
 */
const INSERT_BATCH = 1000;

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
  const ids = uuidsOf(documentIds);
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
