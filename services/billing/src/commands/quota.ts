// The monthly operations quota. Reservations are atomic conditional updates, so N parallel
// requests with k operations left yield exactly k successes; each charge key is billed once.
import { type Knex, type Principal, QuotaExceededError } from "@redline/service-kit";
import { SCHEMA } from "../migrations.js";
import { periodOf, planOf } from "../plans.js";
import type { AccountRow, ChargeRow, UsagePeriodRow } from "../tables.js";

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

async function ownerPlan(db: Knex | Knex.Transaction, ownerId: string) {
  const account = await db<AccountRow>(`${SCHEMA}.accounts`).where({ id: ownerId }).first();
  return planOf(account?.plan ?? "free");
}

function view(used: number, planName: string, charged: number, now: Date): UsageView {
  const plan = planOf(planName);
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

async function usedIn(db: Knex | Knex.Transaction, ownerId: string, periodStart: string): Promise<number> {
  const row = await db<UsagePeriodRow>(`${SCHEMA}.usage_periods`)
    .where({ owner_id: ownerId, period_start: periodStart })
    .first();
  return row?.ops_used ?? 0;
}

/** Reads the owner's usage in the current period (nothing charged). */
export async function getUsage(db: Knex, principal: Principal, now = new Date()): Promise<UsageView> {
  const plan = await ownerPlan(db, principal.ownerId);
  return view(await usedIn(db, principal.ownerId, periodOf(now).start), plan.name, 0, now);
}

/**
 * Holds `ops` operations under `chargeKey`. Idempotent: a key already held returns the usage
 * without charging again. Throws QuotaExceededError (429, Retry-After to the next period) when
 * a hard-stop plan has fewer than `ops` operations left.
 */
export async function reserveOperations(
  db: Knex,
  principal: Principal,
  chargeKey: string,
  ops: number,
  now = new Date(),
): Promise<UsageView> {
  const period = periodOf(now);
  const plan = await ownerPlan(db, principal.ownerId);
  return db.transaction(async (trx) => {
    const existing = await trx<ChargeRow>(`${SCHEMA}.charges`)
      .where({ owner_id: principal.ownerId, charge_key: chargeKey })
      .first();
    if (existing)
      return view(await usedIn(trx, principal.ownerId, existing.period_start), plan.name, existing.ops, now);
    // Claim the key first: a concurrent retry of the same key waits here on the primary key.
    const claimed = await trx(`${SCHEMA}.charges`)
      .insert({
        owner_id: principal.ownerId,
        charge_key: chargeKey,
        period_start: period.start,
        ops,
        state: "reserved",
      })
      .onConflict(["owner_id", "charge_key"])
      .ignore()
      .returning("charge_key");
    if (claimed.length === 0) {
      return view(await usedIn(trx, principal.ownerId, period.start), plan.name, ops, now);
    }
    await trx(`${SCHEMA}.usage_periods`)
      .insert({ owner_id: principal.ownerId, period_start: period.start, ops_used: 0 })
      .onConflict(["owner_id", "period_start"])
      .ignore();
    const updated = await trx(`${SCHEMA}.usage_periods`)
      .where({ owner_id: principal.ownerId, period_start: period.start })
      .modify((q) => {
        if (plan.hardStop) q.whereRaw("ops_used + ? <= ?", [ops, plan.monthlyLimit]);
      })
      .increment("ops_used", ops)
      .returning("ops_used");
    if (updated.length === 0) {
      const used = await usedIn(trx, principal.ownerId, period.start);
      const retryAfter = (period.end.getTime() - now.getTime()) / 1000;
      const usage = view(used, plan.name, 0, now);
      throw new QuotaExceededError(plan.monthlyLimit, used, retryAfter, {
        monthly_used: usage.monthlyUsed,
        monthly_limit: usage.monthlyLimit,
        monthly_remaining: usage.monthlyRemaining,
        quota_exhausted: true,
        subscription_tier: usage.subscriptionTier,
      });
    }
    return view(updated[0].ops_used, plan.name, ops, now);
  });
}

/**
 * Fixes the final operation count of a reservation: 0 releases it (a turn that changed
 * nothing), more than reserved charges the difference (capped at the limit on hard-stop plans).
 * Idempotent: a settled key returns its usage unchanged. NotFound keys return usage unbilled.
 */
export async function settleOperations(
  db: Knex,
  principal: Principal,
  chargeKey: string,
  ops: number,
  now = new Date(),
): Promise<UsageView> {
  const plan = await ownerPlan(db, principal.ownerId);
  return db.transaction(async (trx) => {
    const charge = await trx<ChargeRow>(`${SCHEMA}.charges`)
      .where({ owner_id: principal.ownerId, charge_key: chargeKey })
      .forUpdate()
      .first();
    if (!charge) return view(await usedIn(trx, principal.ownerId, periodOf(now).start), plan.name, 0, now);
    const where = { owner_id: principal.ownerId, period_start: charge.period_start };
    if (charge.state === "settled")
      return view(await usedIn(trx, principal.ownerId, charge.period_start), plan.name, charge.ops, now);
    const usage = await trx<UsagePeriodRow>(`${SCHEMA}.usage_periods`).where(where).forUpdate().first();
    const used = usage?.ops_used ?? 0;
    let final = Math.max(0, ops);
    if (plan.hardStop && final > charge.ops)
      final = Math.min(final, charge.ops + Math.max(0, plan.monthlyLimit - used));
    const delta = final - charge.ops;
    const [row] = await trx(`${SCHEMA}.usage_periods`).where(where).increment("ops_used", delta).returning("ops_used");
    await trx(`${SCHEMA}.charges`)
      .where({ owner_id: principal.ownerId, charge_key: chargeKey })
      .update({ ops: final, state: "settled" });
    return view(row.ops_used, plan.name, final, now);
  });
}
