// SQL of ingest.exports: stored downloads and email export requests.
import type { Knex } from "@redline/service-kit";
import type { ExportRow } from "../tables.js";

type NewExport = Pick<ExportRow, "id" | "owner_id" | "kind" | "format" | "filename" | "status"> &
  Partial<Pick<ExportRow, "session_id" | "recipient_email" | "object_key">>;

/** Records an export. */
export async function insertExport(db: Knex | Knex.Transaction, row: NewExport): Promise<void> {
  await db<ExportRow>("exports").insert(row);
}

/** Sets an export's outcome: sent (with its stored object) or failed (with the error, and the object stored before it failed, or ""). */
export async function updateExportStatus(
  db: Knex,
  id: string,
  change: { status: "sent"; object_key: string } | { status: "failed"; error: string; object_key: string },
): Promise<void> {
  await db<ExportRow>("exports")
    .where({ id })
    .update({ ...change, updated_at: db.fn.now() });
}

/** Serializes email-export requests of one owner until the transaction ends. */
export async function lockOwnerEmailExports(tx: Knex.Transaction, ownerId: string): Promise<void> {
  await tx.raw("select pg_advisory_xact_lock(hashtext(?))", [`email-export:${ownerId}`]);
}

/**
 * Seconds until each of the owner's email exports of the last hour leaves that window, newest
 * first, at most `limit` of them. The database's clock, so every ingest process counts alike.
 */
export async function recentEmailExportWaits(tx: Knex.Transaction, ownerId: string, limit: number): Promise<number[]> {
  const rows = (await tx<ExportRow>("exports")
    .where({ owner_id: ownerId, kind: "email" })
    .andWhere("created_at", ">", tx.raw("now() - interval '1 hour'"))
    .orderBy("created_at", "desc")
    .limit(limit)
    .select(tx.raw("extract(epoch from created_at + interval '1 hour' - now()) as wait_seconds"))) as unknown as {
    wait_seconds: string | number;
  }[];
  return rows.map((r) => Number(r.wait_seconds));
}
