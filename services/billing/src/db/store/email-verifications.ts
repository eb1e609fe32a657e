// Email verification codes: all SQL of billing.email_verifications. Functions take a `Knex | Knex.Transaction`;
// commands/accounts.ts opens the transaction.
import type { Knex } from "@redline/service-kit";
import { type EmailVerificationRow, TABLES } from "../tables.js";

type Db = Knex | Knex.Transaction;

/** Stores a new verification (the code only as its hash). */
export async function insertVerification(
  db: Db,
  row: Pick<EmailVerificationRow, "id" | "account_id" | "email" | "code_hash" | "expires_at" | "created_at">,
): Promise<void> {
  await db(TABLES.emailVerifications).insert(row);
}

/** Creation times of the account's verifications since `since`, oldest first (the mails-per-hour cap). */
export async function recentVerifications(db: Db, accountId: string, since: Date): Promise<Date[]> {
  const rows = await db<EmailVerificationRow>(TABLES.emailVerifications)
    .where({ account_id: accountId })
    .andWhere("created_at", ">=", since)
    .orderBy("created_at")
    .select("created_at");
  return rows.map((r) => r.created_at);
}

/** Ends every open verification of the account (a new email, or the email cleared). */
export async function closeOpenVerifications(db: Db, accountId: string, at: Date): Promise<void> {
  await db(TABLES.emailVerifications).where({ account_id: accountId }).whereNull("used_at").update({ used_at: at });
}

/** The account's newest verification still open (unused), locked until the transaction ends. */
export function latestOpenVerificationForUpdate(
  trx: Knex.Transaction,
  accountId: string,
): Promise<EmailVerificationRow | undefined> {
  return trx<EmailVerificationRow>(TABLES.emailVerifications)
    .where({ account_id: accountId })
    .whereNull("used_at")
    .orderBy("created_at", "desc")
    .forUpdate()
    .first();
}

/** Marks the verification used. */
export async function markVerificationUsed(db: Db, id: string, at: Date): Promise<void> {
  await db(TABLES.emailVerifications).where({ id }).update({ used_at: at });
}
