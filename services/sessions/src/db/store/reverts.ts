// SQL of reverts: deactivating and reactivating a session's messages, and the revert records.
import type { Knex } from "@redline/service-kit";
import { type MessageRow, type RevertRow, T } from "../tables.js";
import type { Db } from "./sessions.js";

/** Deactivates the active messages from `turnIndex` on; their ids and turn indexes. */
export async function deactivateFrom(
  db: Db,
  ownerId: string,
  sessionId: string,
  turnIndex: number,
): Promise<{ id: string; turn_index: number }[]> {
  return db<MessageRow>(T.messages)
    .where({ owner_id: ownerId, session_id: sessionId, active: true })
    .andWhere("turn_index", ">=", turnIndex)
    .update({ active: false })
    .returning(["id", "turn_index"]);
}

/** Reactivates the messages `ids`; their turn indexes. */
export async function reactivate(db: Db, ownerId: string, sessionId: string, ids: string[]): Promise<number[]> {
  const rows = await db<MessageRow>(T.messages)
    .where({ owner_id: ownerId, session_id: sessionId })
    .whereIn("id", ids)
    .update({ active: true })
    .returning(["turn_index"]);
  return rows.map((r) => r.turn_index);
}

/** Active messages written after `since`. */
export async function activeMessagesSince(db: Db, ownerId: string, sessionId: string, since: Date): Promise<number> {
  const [row] = await db(T.messages)
    .where({ owner_id: ownerId, session_id: sessionId, active: true })
    .andWhere("created_at", ">", since)
    .count<{ count: string }[]>("* as count");
  return Number(row?.count ?? 0);
}

/** Stores a revert. */
export async function insertRevert(db: Db, row: Omit<RevertRow, "created_at" | "undone_at">): Promise<void> {
  await db(T.reverts).insert({
    ...row,
    message_ids: JSON.stringify(row.message_ids),
    closed_slot_ids: JSON.stringify(row.closed_slot_ids),
    restored: JSON.stringify(row.restored),
  });
}

/** A revert of the owner's session, or undefined. */
export async function findRevert(
  db: Db,
  ownerId: string,
  sessionId: string,
  id: string,
): Promise<RevertRow | undefined> {
  return db<RevertRow>(T.reverts).where({ id, owner_id: ownerId, session_id: sessionId }).first();
}

/** findRevert locked for update. */
export async function lockRevert(
  trx: Knex.Transaction,
  ownerId: string,
  sessionId: string,
  id: string,
): Promise<RevertRow | undefined> {
  return trx<RevertRow>(T.reverts).where({ id, owner_id: ownerId, session_id: sessionId }).forUpdate().first();
}

/** Marks a revert undone now. */
export async function markRevertUndone(db: Db, id: string): Promise<void> {
  await db(T.reverts).where({ id }).update({ undone_at: db.fn.now() });
}
