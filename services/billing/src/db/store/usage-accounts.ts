// The billing terms of an account (plan, custom limit, cycle anchor) as operators change them:
// all SQL of `admin accounts set-plan / set-limit`. Identity (names, keys) stays in accounts.ts.
import type { Knex } from "@redline/service-kit";
import { type AccountRow, TABLES } from "../tables.js";

type Db = Knex | Knex.Transaction;

/** Which account: by id, or by a user's or an organization's name. */
export type AccountLookup = { id: string } | { kind: AccountRow["kind"]; name: string };

/** The account, locked FOR UPDATE (a plan change and a concurrent one queue). */
export function lockAccount(db: Knex.Transaction, lookup: AccountLookup): Promise<AccountRow | undefined> {
  return db<AccountRow>(TABLES.accounts).where(lookup).forUpdate().first();
}

/** Writes the account's billing terms; the row after. */
export async function updateTerms(
  db: Db,
  id: string,
  terms: Partial<Pick<AccountRow, "plan" | "monthly_limit" | "anchor_day">>,
): Promise<AccountRow> {
  const [row] = await db<AccountRow>(TABLES.accounts).where({ id }).update(terms).returning("*");
  return row;
}

/**
 * Re-keys the owner's usage row and charges of the period starting `from` to `to` (YYYY-MM-DD),
 * so a moved anchor carries the used operations over; a no-op when a row at `to` exists.
 */
export async function movePeriod(db: Db, ownerId: string, from: string, to: string): Promise<void> {
  const taken = await db(TABLES.usagePeriods).where({ owner_id: ownerId, period_start: to }).first();
  if (taken) return;
  await db(TABLES.usagePeriods).where({ owner_id: ownerId, period_start: from }).update({ period_start: to });
  await db(TABLES.charges).where({ owner_id: ownerId, period_start: from }).update({ period_start: to });
}
