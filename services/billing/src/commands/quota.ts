// The monthly operations quota (interface-spec Limits; unshown-parts.md Accounts). Reservations
// are atomic conditional updates, so N parallel requests with k operations left yield exactly k
// successes; each charge key is billed once. The SQL lives in db/store/usage.ts.
import { type Knex, type Principal, QuotaExceededError } from "@redline/service-kit";
import { findAccount } from "../db/store/accounts.js";
import {
  applySettlement,
  type ChargeRef,
  chargeAndClaim,
  isChargeKeyTaken,
  readCharge,
  usedIn,
} from "../db/store/usage.js";
import { type Plan, periodOf, planOf } from "./plans.js";

/** The spec's usage object, in camelCase as the proto has it. */
export interface UsageView {
  monthlyUsed: number;
  monthlyLimit: number;
  monthlyRemaining: number;
  wasBillable: boolean;
  opsCharged: number;
  quotaExhausted: boolean;
  subscriptionTier: string;
  bucketUsed: string;
  periodEnd: Date;
}

function view(used: number, plan: Plan, charged: number, now: Date): UsageView {
  return {
    monthlyUsed: used,
    monthlyLimit: plan.monthlyLimit,
    monthlyRemaining: Math.max(0, plan.monthlyLimit - used),
    wasBillable: charged > 0,
    opsCharged: charged,
    quotaExhausted: used >= plan.monthlyLimit,
    subscriptionTier: plan.name,
    bucketUsed: charged > 0 ? "monthly" : "none",
    periodEnd: periodOf(now).end,
  };
}

/** What a reservation or settlement is about: the idempotency key and the operation count. */
export interface Charge {
  chargeKey: string;
  ops: number;
  /** The moment that picks the monthly period; default now. */
  now?: Date;
}

/** Reads the owner's usage in the current period (nothing charged). */
export async function getUsage(db: Knex, principal: Principal, now = new Date()): Promise<UsageView> {
  const account = await findAccount(db, principal.ownerId);
  const used = await usedIn(db, principal.ownerId, periodOf(now).start);
  return view(used, planOf(account?.plan ?? "free"), 0, now);
}

/** The 429 of a refused reservation, with the usage read after the refusal. */
async function quotaExceeded(db: Knex, ownerId: string, plan: Plan, now: Date): Promise<QuotaExceededError> {
  // Read after the refusal: the statement's own snapshot may predate the usage that refused it.
  const period = periodOf(now);
  const usage = view(await usedIn(db, ownerId, period.start), plan, 0, now);
  const retryAfter = (period.end.getTime() - now.getTime()) / 1000;
  return new QuotaExceededError(plan.monthlyLimit, usage.monthlyUsed, retryAfter, {
    monthly_used: usage.monthlyUsed,
    monthly_limit: usage.monthlyLimit,
    monthly_remaining: usage.monthlyRemaining,
    quota_exhausted: true,
    subscription_tier: usage.subscriptionTier,
  });
}

/**
 * Holds `ops` operations under `chargeKey`. Idempotent: a key already held returns the usage
 * without charging again. Throws QuotaExceededError (429, Retry-After in seconds to the next
 * period, X-Usage-*) when a hard-stop plan has fewer than `ops` operations left; then nothing is
 * written. Two round trips (one read, one write); one for a key already held.
 */
export async function reserveOperations(db: Knex, caller: Principal, charge: Charge): Promise<UsageView> {
  const { chargeKey, ops, now = new Date() } = charge;
  const ref: ChargeRef = { ownerId: caller.ownerId, chargeKey };
  const period = periodOf(now);
  const seen = await readCharge(db, ref, period.start);
  const plan = planOf(seen.plan ?? "free");
  if (seen.state !== null) return view(seen.charge_used ?? 0, plan, seen.ops ?? 0, now);
  let used: number | null;
  try {
    used = await chargeAndClaim(db, ref, period.start, ops, plan.hardStop ? plan.monthlyLimit : null);
  } catch (err) {
    if (!isChargeKeyTaken(err)) throw err;
    // A concurrent retry of the same key claimed it (and charged) first: report, charge nothing.
    return view(await usedIn(db, caller.ownerId, period.start), plan, ops, now);
  }
  if (used === null) throw await quotaExceeded(db, caller.ownerId, plan, now);
  return view(used, plan, ops, now);
}

/** One settle attempt; null when a concurrent write broke applySettlement's guard (only unlocked). */
async function settleAttempt(
  db: Knex | Knex.Transaction,
  ref: ChargeRef,
  ops: number,
  now: Date,
  lock: boolean,
): Promise<UsageView | null> {
  const seen = await readCharge(db, ref, periodOf(now).start, lock);
  const plan = planOf(seen.plan ?? "free");
  if (seen.state === null || seen.ops === null) return view(seen.current_used ?? 0, plan, 0, now);
  if (seen.state === "settled") return view(seen.charge_used ?? 0, plan, seen.ops, now);
  const used = seen.charge_used ?? 0;
  let final = Math.max(0, ops);
  const grows = plan.hardStop && final > seen.ops;
  if (grows) final = Math.min(final, seen.ops + Math.max(0, plan.monthlyLimit - used));
  // The cap guard makes the write fail, not overcharge, if usage grew since this read.
  const cap = grows && final > seen.ops ? plan.monthlyLimit : null;
  const after = await applySettlement(db, ref, { reserved: seen.ops, final, cap });
  return after === null ? null : view(after, plan, final, now);
}

/**
 * Fixes the final operation count of a reservation: 0 releases it (a turn that changed
 * nothing), more than reserved charges the difference (capped at the limit on hard-stop plans).
 * Idempotent: a settled key returns its usage unchanged. Unknown keys return usage unbilled.
 * Two round trips (one read, one write); one for a settled or unknown key. Only when a concurrent
 * write to the same charge or usage row lands between them is it redone under row locks.
 */
export async function settleOperations(db: Knex, caller: Principal, charge: Charge): Promise<UsageView> {
  const { chargeKey, ops, now = new Date() } = charge;
  const ref: ChargeRef = { ownerId: caller.ownerId, chargeKey };
  const optimistic = await settleAttempt(db, ref, ops, now, false);
  if (optimistic) return optimistic;
  return db.transaction(async (trx) => {
    const locked = await settleAttempt(trx, ref, ops, now, true);
    // Cannot happen: with both rows locked and the cap computed from the locked usage, the guards hold.
    if (!locked) throw new Error(`settling ${chargeKey} failed under row locks`);
    return locked;
  });
}
