// Takeover links of agent accounts and the per-source window of agent sign-ups: all their SQL.
// Functions take a `Knex | Knex.Transaction`; the command opens the transaction.
import type { Knex } from "@redline/service-kit";
import { type HandoffRow, TABLES } from "../tables.js";

type Db = Knex | Knex.Transaction;

/** Stores a new link (the code only as its hash). */
export async function insertHandoff(
  db: Db,
  row: Pick<HandoffRow, "id" | "account_id" | "email" | "code_hash" | "expires_at" | "created_at">,
): Promise<void> {
  await db(TABLES.handoffs).insert(row);
}

/**
 * Creation times of the account's links opened since `since`, oldest first, after locking the
 * account's row so that concurrent requests count one at a time.
 */
export async function lockedRecentHandoffs(trx: Knex.Transaction, accountId: string, since: Date): Promise<Date[]> {
  await trx(TABLES.accounts).where({ id: accountId }).forUpdate().select("id");
  const rows = await trx<HandoffRow>(TABLES.handoffs)
    .where({ account_id: accountId })
    .andWhere("created_at", ">=", since)
    .orderBy("created_at")
    .select("created_at");
  return rows.map((r) => r.created_at);
}

/** The link by id, locked until the transaction ends (attempts are counted one at a time). */
export function findHandoffForUpdate(trx: Knex.Transaction, id: string): Promise<HandoffRow | undefined> {
  return trx<HandoffRow>(TABLES.handoffs).where({ id }).forUpdate().first();
}

/** Marks the link used. */
export async function markClaimed(db: Db, id: string): Promise<void> {
  await db(TABLES.handoffs).where({ id }).update({ claimed_at: db.fn.now() });
}

/**
 * Counts one sign-up of `source` in the window starting at `windowStart` and returns the count
 * including it; drops the source's windows older than a day on the way (one row per hour).
 */
export async function countSignup(db: Db, source: string, windowStart: Date): Promise<number> {
  await db(TABLES.signupWindows)
    .where({ source })
    .andWhere("window_start", "<", new Date(windowStart.getTime() - 86_400_000))
    .delete();
  const [row] = await db(TABLES.signupWindows)
    .insert({ source, window_start: windowStart, count: 1 })
    .onConflict(["source", "window_start"])
    .merge({ count: db.raw("signup_windows.count + 1") })
    .returning<{ count: number }[]>("count");
  return row.count;
}
