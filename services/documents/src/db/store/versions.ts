// SQL of documents.versions: one row per commit.
import { type Db, TABLES as T, type VersionRow } from "../tables.js";
import { isUuid } from "./documents.js";

/** Inserts a version row. */
export async function insertVersion(db: Db, row: Omit<VersionRow, "created_at">): Promise<void> {
  await db(T.versions).insert(row);
}

/** A version of the document by id, or undefined. */
export function findVersion(db: Db, documentId: string, versionId: string): Promise<VersionRow | undefined> {
  if (!isUuid(versionId)) return Promise.resolve(undefined);
  return db<VersionRow>(T.versions).where({ document_id: documentId, id: versionId }).first();
}

/** The version an earlier commit with this idempotency key wrote on the document, or undefined. */
export function findVersionByKey(db: Db, documentId: string, idempotencyKey: string): Promise<VersionRow | undefined> {
  return db<VersionRow>(T.versions).where({ document_id: documentId, idempotency_key: idempotencyKey }).first();
}
