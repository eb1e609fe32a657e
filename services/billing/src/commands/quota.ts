// The operations quota (interface-spec Limits and usage object; unshown-parts.md Accounts).
// Operations come from the owner's live promotion grants first (the one expiring first), then the
// monthly bucket of the account's own billing period, then overage where the plan allows it.
// Reservations are atomic: N parallel requests with k operations left yield exactly k successes;
// each charge key is billed once, and a refund returns operations to the buckets they came from.
// The SQL lives in db/store/usage.ts.
import { type Knex, type Principal, QuotaExceededError } from "@redline/service-kit";
import {
  adjustGrants,
  applySettlement,
  bumpUsage,
  type ChargeRef,
  type ChargeSnapshot,
  chargeAndClaim,
  expiredHolds,
  insertCharge,
  isChargeKeyTaken,
  liveGrants,
  markSettled,
  readCharge,
  readOwnerUsage,
  usedIn,
} from "../db/store/usage.js";
import type { GrantPart, PromotionGrantRow } from "../db/tables.js";
import { anchorDayOf, type Plan, type PlanTerms, periodOf, planFor } from "./plans.js";

/** A live promotion grant as the usage object lists it. */
export interface PromotionView {
  redemptionId: string;
  name: string;
  opsGranted: number;
  opsRemaining: number;
  expiresAt: Date;
}

/** The spec's usage object, in camelCase as the proto has it. */
export interface UsageView {
  monthlyUsed: number;
  monthlyLimit: number;
  monthlyRemaining: number;
  wasBillable: boolean;
  opsCharged: number;
  quotaExhausted: boolean;
  subscriptionTier: string;
  /** "promotion", "monthly", "overage" or "none": the bucket that paid first. */
  bucketUsed: string;
  /** The grant that paid when bucketUsed is "promotion"; "" otherwise. */
  redemptionId: string;
  promotions: PromotionView[];
  periodStart: Date;
  periodEnd: Date;
}

/** The owner's plan and current period, from one snapshot of the account row. */
export interface Cycle {
  plan: Plan;
  period: ReturnType<typeof periodOf>;
}

/** The plan and the period holding `now` for an account's terms. */
export function cycleOf(terms: PlanTerms | undefined, now: Date): Cycle {
  return { plan: planFor(terms), period: periodOf(now, anchorDayOf(terms)) };
}

/** ops_used in the current period from a snapshot's latest usage row (0 when it is an older period's). */
function currentUsed(seen: Pick<ChargeSnapshot, "latest_period" | "latest_used">, cycle: Cycle): number {
  return seen.latest_period === cycle.period.start ? (seen.latest_used ?? 0) : 0;
}

/** What a charge reports: operations, first bucket and the grant that paid (if one did). */
interface Charged {
  ops: number;
  bucket: string;
  parts: GrantPart[];
}

const NOTHING: Charged = { ops: 0, bucket: "none", parts: [] };

function view(used: number, cycle: Cycle, charged: Charged, grants: PromotionGrantRow[]): UsageView {
  const { plan, period } = cycle;
  const promoLeft = grants.reduce((sum, g) => sum + g.ops_remaining, 0);
  const paid = charged.ops > 0;
  return {
    monthlyUsed: used,
    monthlyLimit: plan.monthlyLimit,
    monthlyRemaining: Math.max(0, plan.monthlyLimit - used),
    wasBillable: paid,
    opsCharged: charged.ops,
    // Exhausted only when no bucket is left: a live grant still pays past the monthly limit.
    quotaExhausted: used >= plan.monthlyLimit && promoLeft === 0,
    subscriptionTier: plan.name,
    bucketUsed: paid ? charged.bucket : "none",
    redemptionId: paid && charged.bucket === "promotion" ? (charged.parts[0]?.redemption_id ?? "") : "",
    promotions: grants
      .filter((g) => g.ops_remaining > 0)
      .map((g) => ({
        redemptionId: g.id,
        name: g.name,
        opsGranted: g.ops_granted,
        opsRemaining: g.ops_remaining,
        expiresAt: g.expires_at,
      })),
    periodStart: period.startsAt,
    periodEnd: period.end,
  };
}

/**
 * Splits `ops` across live grants in order (soonest expiry first): the operations each pays.
 * What the grants cannot cover is left for the monthly bucket (ops minus the parts' sum).
 */
export function allocate(grants: readonly PromotionGrantRow[], ops: number): GrantPart[] {
  const parts: GrantPart[] = [];
  let left = ops;
  for (const grant of grants) {
    if (left <= 0) break;
    const take = Math.min(left, grant.ops_remaining);
    if (take > 0) parts.push({ redemption_id: grant.id, ops: take });
    left -= take;
  }
  return parts;
}

const sumOps = (parts: readonly GrantPart[]) => parts.reduce((sum, p) => sum + p.ops, 0);

/** The grants after `parts` were taken from them (sign -1) or returned (sign +1). */
function afterParts(grants: PromotionGrantRow[], parts: GrantPart[], sign: 1 | -1): PromotionGrantRow[] {
  return grants.map((g) => {
    const delta = parts.filter((p) => p.redemption_id === g.id).reduce((sum, p) => sum + p.ops, 0);
    return { ...g, ops_remaining: Math.min(g.ops_granted, g.ops_remaining + sign * delta) };
  });
}

/** What a reservation or settlement is about: the idempotency key and the operation count. */
export interface Charge {
  chargeKey: string;
  ops: number;
  /** The moment that picks the billing period and the live grants (billing's clock); default now. */
  now?: Date;
  /** Reservations only: ms after `now` when the sweep releases the hold if still reserved; 0/absent = never. */
  holdExpiryMs?: number;
}

/** The owner's live grants, read only when the snapshot saw some (one round trip saved otherwise). */
async function grantsIf(db: Knex, seen: { promo_left: number }, ownerId: string, now: Date) {
  return seen.promo_left > 0 ? liveGrants(db, ownerId, now) : [];
}

/** Reads the owner's usage in the current period with its live grants (nothing charged). */
export async function getUsage(db: Knex, principal: Pick<Principal, "ownerId">, now = new Date()): Promise<UsageView> {
  const [owner, grants] = await Promise.all([
    readOwnerUsage(db, principal.ownerId, now),
    liveGrants(db, principal.ownerId, now),
  ]);
  const cycle = cycleOf(owner, now);
  return view(currentUsed(owner, cycle), cycle, NOTHING, grants);
}

/** The 429 of a refused reservation; Retry-After counts to the account's own next period. */
async function quotaExceeded(db: Knex, ownerId: string, cycle: Cycle, now: Date): Promise<QuotaExceededError> {
  // Read after the refusal: the statement's own snapshot may predate the usage that refused it.
  const usage = view(await usedIn(db, ownerId, cycle.period.start), cycle, NOTHING, []);
  const retryAfter = (cycle.period.end.getTime() - now.getTime()) / 1000;
  return new QuotaExceededError(
    cycle.plan.monthlyLimit,
    usage.monthlyUsed,
    retryAfter,
    {
      monthly_used: usage.monthlyUsed,
      monthly_limit: usage.monthlyLimit,
      monthly_remaining: usage.monthlyRemaining,
      quota_exhausted: true,
      subscription_tier: usage.subscriptionTier,
    },
    cycle.plan.monthlyLimit === 0 ? NO_OPERATIONS_DETAIL : undefined,
  );
}

/** The 429 detail of an account whose plan grants no operations (a new self-service organization). */
export const NO_OPERATIONS_DETAIL =
  "This account's plan grants no operations: ask the operator for a plan (admin accounts set-plan), or redeem a promotion code";

/** The charge a snapshot saw, as a Charged. */
function seenCharge(seen: ChargeSnapshot): Charged {
  return { ops: seen.ops ?? 0, bucket: seen.bucket_used ?? "monthly", parts: seen.grant_parts ?? [] };
}

/**
 * Reserves across buckets in one transaction: the live grants are locked in expiry order, what
 * they cannot cover goes to the monthly bucket (refused past the limit on hard-stop plans:
 * then the transaction writes nothing), and the charge records each grant's part. Null = refused.
 */
async function reserveAcrossBuckets(
  db: Knex,
  ref: ChargeRef,
  cycle: Cycle,
  ops: number,
  now: Date,
  expiresAt: Date | null,
): Promise<{ used: number; charged: Charged; grants: PromotionGrantRow[] } | null> {
  const { plan, period } = cycle;
  return db.transaction(async (trx) => {
    const grants = await liveGrants(trx, ref.ownerId, now, true);
    const parts = allocate(grants, ops);
    const monthly = ops - sumOps(parts);
    const used = await bumpUsage(
      trx,
      ref.ownerId,
      period.start,
      monthly,
      plan.hardStop && monthly > 0 ? plan.monthlyLimit : null,
    );
    if (used === null) return null;
    await adjustGrants(trx, parts, -1);
    const bucket = parts.length > 0 ? "promotion" : used - monthly >= plan.monthlyLimit ? "overage" : "monthly";
    await insertCharge(trx, ref, { periodStart: period.start, ops, grantParts: parts, bucketUsed: bucket, expiresAt });
    return { used, charged: { ops, bucket, parts }, grants: afterParts(grants, parts, -1) };
  });
}

/**
 * Holds `ops` operations under `chargeKey`: from live promotion grants first, then the monthly
 * bucket, then overage (plans without a hard stop). Idempotent: a key already held returns the
 * usage without charging again. Throws QuotaExceededError (429, Retry-After in seconds to the
 * account's next period, X-Usage-*) when a hard-stop plan cannot cover `ops`; then nothing is
 * written. Owners without grants: two round trips (one read, one write), one for a held key.
 */
export async function reserveOperations(db: Knex, caller: Principal, charge: Charge): Promise<UsageView> {
  const { chargeKey, ops, now = new Date(), holdExpiryMs = 0 } = charge;
  const ref: ChargeRef = { ownerId: caller.ownerId, chargeKey };
  const expiresAt = holdExpiryMs > 0 ? new Date(now.getTime() + holdExpiryMs) : null;
  const seen = await readCharge(db, ref, now);
  const cycle = cycleOf(seen, now);
  if (seen.state !== null) {
    return view(seen.charge_used ?? 0, cycle, seenCharge(seen), await grantsIf(db, seen, ref.ownerId, now));
  }
  try {
    if (seen.promo_left > 0) {
      const done = await reserveAcrossBuckets(db, ref, cycle, ops, now, expiresAt);
      if (done === null) throw await quotaExceeded(db, caller.ownerId, cycle, now);
      return view(done.used, cycle, done.charged, done.grants);
    }
    const { plan } = cycle;
    const used = await chargeAndClaim(
      db,
      ref,
      cycle.period.start,
      ops,
      plan.hardStop ? plan.monthlyLimit : null,
      plan.monthlyLimit,
      expiresAt,
    );
    if (used === null) throw await quotaExceeded(db, caller.ownerId, cycle, now);
    const bucket = used - ops >= plan.monthlyLimit ? "overage" : "monthly";
    return view(used, cycle, { ops, bucket, parts: [] }, []);
  } catch (err) {
    if (!isChargeKeyTaken(err)) throw err;
    // A concurrent retry of the same key claimed it (and charged) first: report, charge nothing more.
    const again = await readCharge(db, ref, now);
    return view(again.charge_used ?? 0, cycle, seenCharge(again), await grantsIf(db, again, ref.ownerId, now));
  }
}

/** One monthly-only settle attempt; null when a concurrent write broke applySettlement's guard. */
async function settleMonthly(
  db: Knex | Knex.Transaction,
  ref: ChargeRef,
  seen: ChargeSnapshot,
  cycle: Cycle,
  final: number,
): Promise<UsageView | null> {
  const { plan } = cycle;
  const reserved = seen.ops ?? 0;
  const used = seen.charge_used ?? 0;
  let ops = final;
  const grows = plan.hardStop && ops > reserved;
  if (grows) ops = Math.min(ops, reserved + Math.max(0, plan.monthlyLimit - used));
  // The cap guard makes the write fail, not overcharge, if usage grew since this read.
  const cap = grows && ops > reserved ? plan.monthlyLimit : null;
  const after = await applySettlement(db, ref, { reserved, final: ops, cap });
  return after === null ? null : view(after, cycle, { ...seenCharge(seen), ops }, []);
}

/**
 * Settles a reservation that touches promotion grants, under row locks (charge, its usage row,
 * the live grants): a smaller final count returns operations to the monthly bucket first, then
 * to the grants in reverse order of use; a larger one takes from live grants, then monthly
 * (capped at the limit on hard-stop plans, as a plain settle is). A hold the sweep released
 * (expired, 0 operations) is charged `final` afresh the same way. `end` is the state written:
 * "expired" for the sweep's release.
 */
async function settleAcrossBuckets(
  db: Knex,
  ref: ChargeRef,
  final: number,
  now: Date,
  end: "settled" | "expired" = "settled",
): Promise<UsageView> {
  return db.transaction(async (trx) => {
    // Grants before the charge and its usage row: the order reserveAcrossBuckets takes them in
    // (grants, then usage), so a settle and a reservation of the same owner queue, never deadlock.
    const grants = await liveGrants(trx, ref.ownerId, now, true);
    const seen = await readCharge(trx, ref, now, true);
    const cycle = cycleOf(seen, now);
    // A released hold still charges a turn that settles late (its settle waited out the expiry).
    const open = seen.state === "reserved" || (seen.state === "expired" && final > 0 && end === "settled");
    if (!open || seen.ops === null || seen.charge_period === null) {
      return view(seen.charge_used ?? currentUsed(seen, cycle), cycle, seen.state ? seenCharge(seen) : NOTHING, grants);
    }
    const reserved = seen.ops;
    let parts = [...(seen.grant_parts ?? [])];
    let monthlyDelta = 0;
    const returned: GrantPart[] = [];
    let taken: GrantPart[] = [];
    if (final < reserved) {
      // Refund: the monthly part was taken last, so it goes back first.
      let back = reserved - final;
      const monthlyPart = reserved - sumOps(parts);
      monthlyDelta = -Math.min(back, monthlyPart);
      back += monthlyDelta;
      for (const part of [...parts].reverse()) {
        if (back <= 0) break;
        const give = Math.min(back, part.ops);
        returned.push({ redemption_id: part.redemption_id, ops: give });
        back -= give;
      }
      parts = parts
        .map((p) => ({ ...p, ops: p.ops - sumOps(returned.filter((r) => r.redemption_id === p.redemption_id)) }))
        .filter((p) => p.ops > 0);
    } else if (final > reserved) {
      taken = allocate(grants, final - reserved);
      const rest = final - reserved - sumOps(taken);
      const { plan } = cycle;
      const room = Math.max(0, plan.monthlyLimit - (seen.charge_used ?? 0));
      monthlyDelta = plan.hardStop ? Math.min(rest, room) : rest;
      for (const t of taken) {
        const same = parts.find((p) => p.redemption_id === t.redemption_id);
        if (same) same.ops += t.ops;
        else parts.push({ ...t });
      }
    }
    const ops = reserved - sumOps(returned) + sumOps(taken) + monthlyDelta;
    const used = await bumpUsage(trx, ref.ownerId, seen.charge_period, monthlyDelta, null);
    await adjustGrants(trx, returned, 1);
    await adjustGrants(trx, taken, -1);
    await markSettled(trx, ref, ops, parts, end);
    const after = afterParts(afterParts(grants, taken, -1), returned, 1);
    const bucket =
      parts.length > 0 ? "promotion" : seen.bucket_used === "promotion" ? "monthly" : (seen.bucket_used ?? "monthly");
    return view(used ?? 0, cycle, { ops, bucket, parts }, after);
  });
}

/**
 * Fixes the final operation count of a reservation: 0 releases it (a turn that changed
 * nothing), more than reserved charges the difference (capped at the limit on hard-stop plans),
 * and operations go back to (or come from) the buckets as in reserveOperations. Idempotent: a
 * settled key returns its usage unchanged; unknown keys return usage unbilled. Monthly-only
 * charges: two round trips, redone under row locks only when a concurrent write broke the guard.
 * A hold the sweep released at its expiry is charged by a later settle of more than 0: the turn
 * ran (its settle was owed past the expiry, e.g. while billing was down), so it is billed once.
 */
export async function settleOperations(
  db: Knex,
  caller: Pick<Principal, "ownerId">,
  charge: Charge,
): Promise<UsageView> {
  const { chargeKey, ops, now = new Date() } = charge;
  const ref: ChargeRef = { ownerId: caller.ownerId, chargeKey };
  const final = Math.max(0, ops);
  const seen = await readCharge(db, ref, now);
  const cycle = cycleOf(seen, now);
  if (seen.state === null || seen.ops === null) {
    return view(currentUsed(seen, cycle), cycle, NOTHING, await grantsIf(db, seen, ref.ownerId, now));
  }
  if (seen.state === "settled" || (seen.state === "expired" && final === 0)) {
    return view(seen.charge_used ?? 0, cycle, seenCharge(seen), await grantsIf(db, seen, ref.ownerId, now));
  }
  if (seen.state === "expired") return settleAcrossBuckets(db, ref, final, now);
  const touchesGrants = (seen.grant_parts ?? []).length > 0 || (final > seen.ops && seen.promo_left > 0);
  if (!touchesGrants) {
    const optimistic = await settleMonthly(db, ref, seen, cycle, final);
    if (optimistic) return optimistic;
  }
  // Grants involved, or a concurrent write to the same charge or usage row: redo under row locks.
  return settleAcrossBuckets(db, ref, final, now);
}

/**
 * Releases up to `limit` expired holds (issue #10: a sync chat turn whose agent died mid-turn):
 * each is settled at 0 and marked expired, so its operations return to the buckets they came
 * from as any refund does, and a settle that comes later still bills the turn. Safe beside the
 * agent's own settle and other sweeps: both take the charge's row lock and act only on what they
 * find, so a hold settled first is left alone. Returns the holds released.
 */
export async function releaseExpiredHolds(db: Knex, now: Date, limit = 100): Promise<number> {
  let released = 0;
  for (const ref of await expiredHolds(db, now, limit)) {
    await settleAcrossBuckets(db, ref, 0, now, "expired");
    released++;
  }
  return released;
}
