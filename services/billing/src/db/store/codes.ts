// SQL shared by the tables of mailed one-time codes (takeover links, email verifications): both
// count wrong codes the same way, and the cap must hold under concurrent guesses.
import type { Knex } from "@redline/service-kit";
import type { TABLES } from "../tables.js";

type Db = Knex | Knex.Transaction;

/** The tables whose rows carry failed_attempts and disabled_at. */
export type CodeTable = typeof TABLES.handoffs | typeof TABLES.emailVerifications;

/** Counts one wrong code on row `id` of `table`; the `max`-th disables it for good. The count after. */
export async function recordWrongCode(db: Db, table: CodeTable, id: string, max: number): Promise<number> {
  const [row] = await db<{ id: string; failed_attempts: number; disabled_at: Date | null }>(table)
    .where({ id })
    .update({
      failed_attempts: db.raw("failed_attempts + 1"),
      disabled_at: db.raw("CASE WHEN failed_attempts + 1 >= ? THEN now() ELSE disabled_at END", [max]),
    })
    .returning("failed_attempts");
  return row.failed_attempts;
}
