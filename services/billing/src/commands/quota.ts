// The monthly operations quota. Reservations are atomic conditional updates, so N parallel
// requests with k operations left yield exactly k successes; each charge key is billed once.
// Reserve and settle sit on every chat turn's critical path (issue #5): each is one read and one
// self-contained write statement, with no BEGIN/COMMIT round trips on the common path.
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

/** One read about an owner and a charge key; nulls where a row is absent. */
interface ChargeSnapshot {
  /** The owner's plan name as stored. */
  plan: string | null;
  /** ops_used in the current period. */
  current_used: number | null;
  state: ChargeRow["state"] | null;
  /** The operations the charge holds (reserved) or was billed (settled). */
  ops: number | null;
  /** ops_used in the charge's own period. */
  charge_used: number | null;
}

/**
 * Reads the owner's plan, the current period's usage, and the charge with its period's usage.
 * `lock` takes FOR UPDATE on the charge and that usage row (inside a transaction).
 */
async function readCharge(
  db: Knex | Knex.Transaction,
  ownerId: string,
  chargeKey: string,
  periodStart: string,
  lock = false,
): Promise<ChargeSnapshot> {
  const forUpdate = lock ? "for update" : "";
  // One statement instead of one per table: every round trip here is on a chat turn's critical path.
  const { rows } = await db.raw<{ rows: ChargeSnapshot[] }>(
    `select (select plan from ${SCHEMA}.accounts where id = :owner) as plan,
            (select ops_used from ${SCHEMA}.usage_periods
              where owner_id = :owner and period_start = :period) as current_used,
            c.state, c.ops, u.ops_used as charge_used
       from (select 1) as one
       left join lateral (select state, ops, period_start from ${SCHEMA}.charges
                           where owner_id = :owner and charge_key = :key ${forUpdate}) as c on true
       left join lateral (select ops_used from ${SCHEMA}.usage_periods
                           where owner_id = :owner and period_start = c.period_start ${forUpdate}) as u on true`,
    { owner: ownerId, key: chargeKey, period: periodStart },
  );
  return rows[0];
}

/** True for the unique violation of a charge key claimed by a concurrent reservation. */
function isChargeKeyTaken(err: unknown): boolean {
  return (
    err instanceof Error &&
    "code" in err &&
    err.code === "23505" &&
    "constraint" in err &&
    err.constraint === "charges_pkey"
  );
}

/**
 * Adds `ops` to the period's usage and claims `chargeKey` for them, atomically. Returns the new
 * ops_used, or null when `cap` (the hard-stop limit; null = no limit) refused: nothing written.
 * Throws a unique violation on charges_pkey (see isChargeKeyTaken) when the key is already held.
 */
async function chargeAndClaim(
  db: Knex,
  ownerId: string,
  chargeKey: string,
  periodStart: string,
  ops: number,
  cap: number | null,
): Promise<number | null> {
  // One statement, so all or nothing without BEGIN/COMMIT: the claim is inserted from the usage
  // upsert's result (a refused upsert writes nothing, the fresh insert obeys the cap too) and
  // without ON CONFLICT, so a key claimed concurrently fails the whole statement, undoing the upsert.
  const { rows } = await db.raw<{ rows: { ops_used: number }[] }>(
    `with bumped as (
       insert into ${SCHEMA}.usage_periods as u (owner_id, period_start, ops_used)
       select cast(:owner as uuid), cast(:period as date), cast(:ops as integer)
        where cast(:cap as integer) is null or :ops <= cast(:cap as integer)
       on conflict (owner_id, period_start) do update set ops_used = u.ops_used + excluded.ops_used
        where cast(:cap as integer) is null or u.ops_used + excluded.ops_used <= cast(:cap as integer)
       returning u.ops_used
     ), claimed as (
       insert into ${SCHEMA}.charges (owner_id, charge_key, period_start, ops, state)
       select cast(:owner as uuid), :key, cast(:period as date), cast(:ops as integer), 'reserved' from bumped
     )
     select ops_used from bumped`,
    { owner: ownerId, key: chargeKey, period: periodStart, ops, cap },
  );
  return rows[0]?.ops_used ?? null;
}

/**
 * Holds `ops` operations under `chargeKey`. Idempotent: a key already held returns the usage
 * without charging again. Throws QuotaExceededError (429, Retry-After to the next period) when
 * a hard-stop plan has fewer than `ops` operations left; then nothing is written.
 * Two round trips (one read, one write); one for a key already held.
 */
export async function reserveOperations(
  db: Knex,
  principal: Principal,
  chargeKey: string,
  ops: number,
  now = new Date(),
): Promise<UsageView> {
  const period = periodOf(now);
  const seen = await readCharge(db, principal.ownerId, chargeKey, period.start);
  const plan = planOf(seen.plan ?? "free");
  if (seen.state !== null) return view(seen.charge_used ?? 0, plan.name, seen.ops ?? 0, now);
  let used: number | null;
  try {
    used = await chargeAndClaim(
      db,
      principal.ownerId,
      chargeKey,
      period.start,
      ops,
      plan.hardStop ? plan.monthlyLimit : null,
    );
  } catch (err) {
    if (!isChargeKeyTaken(err)) throw err;
    // A concurrent retry of the same key claimed it (and charged) first: report, charge nothing.
    return view(await usedIn(db, principal.ownerId, period.start), plan.name, ops, now);
  }
  if (used === null) {
    // Read after the refusal: the statement's own snapshot may predate the usage that refused it.
    const current = await usedIn(db, principal.ownerId, period.start);
    const retryAfter = (period.end.getTime() - now.getTime()) / 1000;
    const usage = view(current, plan.name, 0, now);
    throw new QuotaExceededError(plan.monthlyLimit, current, retryAfter, {
      monthly_used: usage.monthlyUsed,
      monthly_limit: usage.monthlyLimit,
      monthly_remaining: usage.monthlyRemaining,
      quota_exhausted: true,
      subscription_tier: usage.subscriptionTier,
    });
  }
  return view(used, plan.name, ops, now);
}

/**
 * Settles a reservation of `reserved` operations at `final`, atomically, if the charge still
 * holds exactly that reservation and, when `cap` is set, the usage plus the difference stays
 * within it. Returns the new ops_used, or null when a guard failed (nothing written).
 */
async function applySettlement(
  db: Knex | Knex.Transaction,
  ownerId: string,
  chargeKey: string,
  reserved: number,
  final: number,
  cap: number | null,
): Promise<number | null> {
  // One statement, so all or nothing without BEGIN/COMMIT: the charge row is locked first (a
  // concurrent settle of the key then leaves no row), usage moves only from that row, and the
  // charge is marked settled only if usage moved.
  const { rows } = await db.raw<{ rows: { ops_used: number }[] }>(
    `with pending as (
       select period_start from ${SCHEMA}.charges
        where owner_id = :owner and charge_key = :key and state = 'reserved' and ops = :reserved
        for update
     ), bumped as (
       update ${SCHEMA}.usage_periods as u set ops_used = u.ops_used + :delta
         from pending
        where u.owner_id = :owner and u.period_start = pending.period_start
          and (cast(:cap as integer) is null or u.ops_used + :delta <= cast(:cap as integer))
       returning u.ops_used
     ), settled as (
       update ${SCHEMA}.charges set ops = :final, state = 'settled'
        where owner_id = :owner and charge_key = :key and exists (select 1 from bumped)
     )
     select ops_used from bumped`,
    { owner: ownerId, key: chargeKey, reserved, final, delta: final - reserved, cap },
  );
  return rows[0]?.ops_used ?? null;
}

/** One settle attempt; null when a concurrent write broke applySettlement's guard (only unlocked). */
async function settleAttempt(
  db: Knex | Knex.Transaction,
  principal: Principal,
  chargeKey: string,
  ops: number,
  now: Date,
  lock: boolean,
): Promise<UsageView | null> {
  const seen = await readCharge(db, principal.ownerId, chargeKey, periodOf(now).start, lock);
  const plan = planOf(seen.plan ?? "free");
  if (seen.state === null || seen.ops === null) return view(seen.current_used ?? 0, plan.name, 0, now);
  if (seen.state === "settled") return view(seen.charge_used ?? 0, plan.name, seen.ops, now);
  const used = seen.charge_used ?? 0;
  let final = Math.max(0, ops);
  const grows = plan.hardStop && final > seen.ops;
  if (grows) final = Math.min(final, seen.ops + Math.max(0, plan.monthlyLimit - used));
  // The cap guard makes the write fail, not overcharge, if usage grew since this read.
  const cap = grows && final > seen.ops ? plan.monthlyLimit : null;
  const after = await applySettlement(db, principal.ownerId, chargeKey, seen.ops, final, cap);
  return after === null ? null : view(after, plan.name, final, now);
}

/**
 * Fixes the final operation count of a reservation: 0 releases it (a turn that changed
 * nothing), more than reserved charges the difference (capped at the limit on hard-stop plans).
 * Idempotent: a settled key returns its usage unchanged. NotFound keys return usage unbilled.
 * Two round trips (one read, one write); one for a settled or unknown key. Only when a concurrent
 * write to the same charge or usage row lands between them is it redone under row locks.
 */
export async function settleOperations(
  db: Knex,
  principal: Principal,
  chargeKey: string,
  ops: number,
  now = new Date(),
): Promise<UsageView> {
  const optimistic = await settleAttempt(db, principal, chargeKey, ops, now, false);
  if (optimistic) return optimistic;
  return db.transaction(async (trx) => {
    const locked = await settleAttempt(trx, principal, chargeKey, ops, now, true);
    // Cannot happen: with both rows locked and the cap computed from the locked usage, the guards hold.
    if (!locked) throw new Error(`settling ${chargeKey} failed under row locks`);
    return locked;
  });
}
