// Plans and their monthly quotas (unshown-parts.md, Accounts: free 500 with a hard stop,
// plus 2,000, pro 10,000 with overage allowed, enterprise custom) and each account's billing
// cycle, which starts on its own anchor day.
import { InputError, type Knex, NotFoundError } from "@redline/service-kit";
import { type AccountLookup, lockAccount, movePeriod, updateTerms } from "../db/store/usage-accounts.js";
import type { AccountRow } from "../db/tables.js";

/** A plan's monthly quota in operations and whether usage may pass it. */
export interface Plan {
  name: string;
  monthlyLimit: number;
  hardStop: boolean;
}

export const PLANS: Record<string, Plan> = {
  // No operations until an operator grants a plan: what a self-service organization starts on
  // (issue #30), so creating organizations cannot multiply a person's free operations.
  none: { name: "none", monthlyLimit: 0, hardStop: true },
  free: { name: "free", monthlyLimit: 500, hardStop: true },
  plus: { name: "plus", monthlyLimit: 2000, hardStop: true },
  pro: { name: "pro", monthlyLimit: 10_000, hardStop: false },
  enterprise: { name: "enterprise", monthlyLimit: 100_000, hardStop: false },
};

/** The plan by name; unknown names fall back to free so a typo never grants more. */
export function planOf(name: string): Plan {
  return PLANS[name] ?? PLANS.free;
}

/** What decides an account's plan and cycle: its plan name, custom limit, anchor day and creation. */
export interface PlanTerms {
  plan: string | null;
  monthly_limit?: number | null;
  anchor_day?: number | null;
  created_at?: Date | null;
}

/** The account's plan with its custom monthly limit (enterprise) applied; free when unknown. */
export function planFor(terms: PlanTerms | undefined): Plan {
  const plan = planOf(terms?.plan ?? "free");
  return terms?.monthly_limit != null ? { ...plan, monthlyLimit: terms.monthly_limit } : plan;
}

/** The day of month (1-31) the account's cycle starts on: its anchor, else the day it was created (UTC). */
export function anchorDayOf(terms: PlanTerms | undefined): number {
  if (terms?.anchor_day) return terms.anchor_day;
  return terms?.created_at ? new Date(terms.created_at).getUTCDate() : 1;
}

/** Midnight UTC of `anchorDay` in the month `monthOffset` months from (year, month), clamped to its length. */
function anchorIn(year: number, month: number, anchorDay: number): Date {
  const daysInMonth = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return new Date(Date.UTC(year, month, Math.min(anchorDay, daysInMonth)));
}

/**
 * The billing period holding `now` for a cycle starting on `anchorDay` (1-31, default 1 =
 * calendar months), clamped to each month's length (anchor 31 → Feb 28/29, then Mar 31).
 * `start` is a YYYY-MM-DD date string (the usage row's key), `startsAt` that midnight UTC, `end`
 * the next period's start (when the quota resets).
 */
export function periodOf(now: Date, anchorDay = 1): { start: string; startsAt: Date; end: Date } {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const thisMonth = anchorIn(y, m, anchorDay);
  const [startsAt, end] =
    now >= thisMonth ? [thisMonth, anchorIn(y, m + 1, anchorDay)] : [anchorIn(y, m - 1, anchorDay), thisMonth];
  return { start: startsAt.toISOString().slice(0, 10), startsAt, end };
}

/** Which account an operator command is about. */
export type AccountRef = AccountLookup;

/** Locks the account or fails with NotFoundError (404) naming it. */
async function accountOrFail(trx: Knex.Transaction, ref: AccountRef): Promise<AccountRow> {
  const row = await lockAccount(trx, ref);
  if (!row) throw new NotFoundError(`No such account: ${"id" in ref ? ref.id : `${ref.kind} ${ref.name}`}`);
  return row;
}

/**
 * Changes an account's plan mid-cycle (`admin accounts set-plan`): the new limit applies at once
 * and the operations used this period carry over. Leaving enterprise drops the custom limit.
 * `anchorDay` (1-31) moves the cycle's start, carrying this period's usage to the new period.
 * InputError (400) for an unknown plan or anchor; NotFoundError (404) for an unknown account.
 */
export async function changePlan(
  db: Knex,
  ref: AccountRef,
  change: { plan: string; anchorDay?: number },
  now: Date,
): Promise<AccountRow> {
  if (!PLANS[change.plan]) throw new InputError(`plan must be one of ${Object.keys(PLANS).join(", ")}`);
  const { anchorDay } = change;
  if (anchorDay !== undefined && (!Number.isInteger(anchorDay) || anchorDay < 1 || anchorDay > 31))
    throw new InputError("anchor day must be an integer from 1 to 31");
  return db.transaction(async (trx) => {
    const account = await accountOrFail(trx, ref);
    const terms: Partial<AccountRow> = { plan: change.plan };
    if (change.plan !== "enterprise") terms.monthly_limit = null;
    if (anchorDay !== undefined) {
      terms.anchor_day = anchorDay;
      const from = periodOf(now, anchorDayOf(account)).start;
      const to = periodOf(now, anchorDay).start;
      if (from !== to) await movePeriod(trx, account.id, from, to);
    }
    return updateTerms(trx, account.id, terms);
  });
}

/**
 * Sets an enterprise account's custom monthly limit (`admin accounts set-limit`), effective at
 * once. InputError (400) for a limit < 1 or an account not on enterprise; NotFoundError (404).
 */
export async function setCustomLimit(db: Knex, ref: AccountRef, monthlyLimit: number): Promise<AccountRow> {
  if (!Number.isInteger(monthlyLimit) || monthlyLimit < 1)
    throw new InputError("monthly limit must be an integer >= 1");
  return db.transaction(async (trx) => {
    const account = await accountOrFail(trx, ref);
    if (account.plan !== "enterprise")
      throw new InputError(
        `custom limits are for enterprise accounts; this one is on ${account.plan} (set-plan first)`,
      );
    return updateTerms(trx, account.id, { monthly_limit: monthlyLimit });
  });
}
