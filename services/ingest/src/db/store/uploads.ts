// SQL of ingest.uploads: pre-signed upload slots.
import type { Knex } from "@redline/service-kit";
import type { UploadRow } from "../tables.js";

/** Records a slot. */
export async function insertUpload(db: Knex, row: Omit<UploadRow, "created_at">): Promise<void> {
  await db<UploadRow>("uploads").insert(row);
}

/** The owner's slot by id, expired or not; undefined when unknown or another owner's. */
export function findUpload(db: Knex, ownerId: string, id: string): Promise<UploadRow | undefined> {
  return db<UploadRow>("uploads").where({ id, owner_id: ownerId }).first();
}
