// SQL of ingest.document_sources: which owner's original file is stored where.
import type { Knex } from "@redline/service-kit";
import type { DocumentSourceRow } from "../tables.js";

/** Records a stored original. */
export async function insertSource(db: Knex, row: Omit<DocumentSourceRow, "created_at" | "checked_at">): Promise<void> {
  await db<DocumentSourceRow>("document_sources").insert(row);
}

/** The owner's original by id; undefined when unknown or another owner's. */
export function findSource(db: Knex, ownerId: string, id: string): Promise<DocumentSourceRow | undefined> {
  return db<DocumentSourceRow>("document_sources").where({ id, owner_id: ownerId }).first();
}
