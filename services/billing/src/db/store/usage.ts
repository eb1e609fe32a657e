// Usage periods and charges: all SQL of the quota. Reserve and settle sit on every chat turn's
// critical path (issue #5), so each write is one self-contained statement (no BEGIN/COMMIT).
import type { Knex } from "@redline/service-kit";
import { type ChargeRow, type GrantPart, type PromotionGrantRow, TABLES, type UsagePeriodRow } from "../tables.js";

type Db = Knex | Knex.Transaction;

/** One charge: the owner billed and the idempotency key of the operation. */
export interface ChargeRef {
  ownerId: string;
  chargeKey: string;
}

/** One read about an owner and a charge key; nulls where a row is absent. */
export interface ChargeSnapshot {
  /** The owner's plan name, custom limit, anchor day and creation, as stored. */
  plan: string | null;
  monthly_limit: number | null;
  anchor_day: number | null;
  created_at: Date | null;
  /** The owner's latest usage row starting on or before today (YYYY-MM-DD) and its ops_used. */
  latest_period: string | null;
  latest_used: number | null;
  /** Operations left in the owner's live promotion grants (0 without any). */
  promo_left: number;
  state: ChargeRow["state"] | null;
  /** The operations the charge holds (reserved) or was billed (settled). */
  ops: number | null;
  /** The charge's own period (YYYY-MM-DD) and ops_used in it. */
  charge_period: string | null;
  charge_used: number | null;
  /** What each grant paid for the charge, and the bucket that paid first. */
  grant_parts: GrantPart[] | null;
  bucket_used: string | null;
}

/**
 * Reads the owner's account terms, latest usage, live promotion operations and the charge with
 * its period's usage, in one statement. `lock` takes FOR UPDATE on the charge and that usage row
 * (inside a transaction).
 */
export async function readCharge(db: Db, ref: ChargeRef, now: Date, lock = false): Promise<ChargeSnapshot> {
  const forUpdate = lock ? "for update" : "";
  // One statement instead of one per table: every round trip here is on a chat turn's critical path.
  // The current period depends on the account's anchor, so the latest row is read and compared
  // with the period computed from the same snapshot (commands/quota.ts).
  const { rows } = await db.raw<{ rows: ChargeSnapshot[] }>(
    `select a.plan, a.monthly_limit, a.anchor_day, a.created_at,
            latest.period_start::text as latest_period, latest.ops_used as latest_used,
            (select coalesce(sum(ops_remaining), 0)::integer from ${TABLES.promotionGrants}
              where owner_id = :owner and ops_remaining > 0 and expires_at > :now) as promo_left,
            c.state, c.ops, c.period_start::text as charge_period, u.ops_used as charge_used,
            c.grant_parts, c.bucket_used
       from (select 1) as one
       left join ${TABLES.accounts} a on a.id = :owner
       left join lateral (select period_start, ops_used from ${TABLES.usagePeriods}
                           where owner_id = :owner and period_start <= cast(:today as date)
                           order by period_start desc limit 1) as latest on true
       left join lateral (select state, ops, period_start, grant_parts, bucket_used from ${TABLES.charges}
                           where owner_id = :owner and charge_key = :key ${forUpdate}) as c on true
       left join lateral (select ops_used from ${TABLES.usagePeriods}
                           where owner_id = :owner and period_start = c.period_start ${forUpdate}) as u on true`,
    { owner: ref.ownerId, key: ref.chargeKey, now: now.toISOString(), today: now.toISOString().slice(0, 10) },
  );
  return rows[0];
}

/** The owner's account terms and latest usage row on or before `now` (what GetUsage needs). */
export async function readOwnerUsage(
  db: Db,
  ownerId: string,
  now: Date,
): Promise<
  Pick<ChargeSnapshot, "plan" | "monthly_limit" | "anchor_day" | "created_at" | "latest_period" | "latest_used">
> {
  // The same statement as a reservation's read, so both see an account alike; no charge has key "".
  return readCharge(db, { ownerId, chargeKey: "" }, now);
}

/**
 * The owner's live grants (unexpired, operations left), soonest expiry first. With `lock` (inside
 * a transaction), every grant of the owner is locked FOR UPDATE first, live or not.
 */
export async function liveGrants(db: Db, ownerId: string, now: Date, lock = false): Promise<PromotionGrantRow[]> {
  const owners = () => db<PromotionGrantRow>(TABLES.promotionGrants).where({ owner_id: ownerId });
  const order = [{ column: "expires_at" }, { column: "id" }];
  if (!lock) return owners().where("ops_remaining", ">", 0).where("expires_at", ">", now).orderBy(order);
  // One lock set and order (expiry, id) for every writer, so they queue, never deadlock. Not only
  // the live ones: a refund goes back to grants exhausted or expired since, and locking only the
  // live set let a refund and a reservation each hold a grant the other waited for.
  const all = await owners().orderBy(order).forUpdate();
  return all.filter((g) => g.ops_remaining > 0 && new Date(g.expires_at) > now);
}

/** Moves `delta` operations (negative to return some) between grants and their owners' turns. */
export async function adjustGrants(db: Db, parts: GrantPart[], sign: 1 | -1): Promise<void> {
  if (parts.length === 0) return;
  // sign -1 takes operations (a reservation), +1 gives them back (a refund), never past ops_granted.
  await db.raw(
    `update ${TABLES.promotionGrants} as g
        set ops_remaining = least(g.ops_granted, g.ops_remaining + :sign * p.ops)
       from unnest(cast(:ids as uuid[]), cast(:ops as integer[])) as p(id, ops)
      where g.id = p.id`,
    { ids: parts.map((p) => p.redemption_id), ops: parts.map((p) => p.ops), sign },
  );
}

/**
 * Adds `ops` (may be 0 or negative) to the owner's usage in the period, creating its row; null
 * when `cap` (the hard-stop limit; null = none) refused, nothing written. The new ops_used.
 */
export async function bumpUsage(
  db: Db,
  ownerId: string,
  periodStart: string,
  ops: number,
  cap: number | null,
): Promise<number | null> {
  const { rows } = await db.raw<{ rows: { ops_used: number }[] }>(
    `insert into ${TABLES.usagePeriods} as u (owner_id, period_start, ops_used)
     select cast(:owner as uuid), cast(:period as date), greatest(0, cast(:ops as integer))
      where cast(:cap as integer) is null or :ops <= cast(:cap as integer)
     on conflict (owner_id, period_start) do update set ops_used = greatest(0, u.ops_used + :ops)
      where cast(:cap as integer) is null or u.ops_used + :ops <= cast(:cap as integer)
     returning u.ops_used`,
    { owner: ownerId, period: periodStart, ops, cap },
  );
  return rows[0]?.ops_used ?? null;
}

/** Claims a charge key for a reservation drawn across buckets (a unique violation when held). */
export async function insertCharge(
  db: Db,
  ref: ChargeRef,
  charge: { periodStart: string; ops: number; grantParts: GrantPart[]; bucketUsed: string; expiresAt: Date | null },
): Promise<void> {
  await db(TABLES.charges).insert({
    owner_id: ref.ownerId,
    charge_key: ref.chargeKey,
    period_start: charge.periodStart,
    ops: charge.ops,
    state: "reserved",
    grant_parts: JSON.stringify(charge.grantParts),
    bucket_used: charge.bucketUsed,
    expires_at: charge.expiresAt,
  });
}

/** Marks a charge settled at `ops` (or expired, released by the sweep), with the grants that paid it now. */
export async function markSettled(
  db: Db,
  ref: ChargeRef,
  ops: number,
  grantParts: GrantPart[],
  state: "settled" | "expired" = "settled",
): Promise<void> {
  await db(TABLES.charges)
    .where({ owner_id: ref.ownerId, charge_key: ref.chargeKey })
    .update({ ops, state, grant_parts: JSON.stringify(grantParts) });
}

/** The owner's latest charges that hold or billed operations, newest first. */
export function recentCharges(db: Db, ownerId: string, limit = 20): Promise<ChargeRow[]> {
  return db<ChargeRow>(TABLES.charges)
    .where({ owner_id: ownerId })
    .where("ops", ">", 0)
    .orderBy([
      { column: "created_at", order: "desc" },
      { column: "charge_key", order: "desc" },
    ])
    .limit(limit);
}

/** ops_used of the owner in the period starting `periodStart` (YYYY-MM-DD); 0 without a row. */
export async function usedIn(db: Db, ownerId: string, periodStart: string): Promise<number> {
  const row = await db<UsagePeriodRow>(TABLES.usagePeriods)
    .where({ owner_id: ownerId, period_start: periodStart })
    .first();
  return row?.ops_used ?? 0;
}

/** True for the unique violation of a charge key claimed by a concurrent reservation. */
export function isChargeKeyTaken(err: unknown): boolean {
  return (
    err instanceof Error &&
    "code" in err &&
    err.code === "23505" &&
    "constraint" in err &&
    err.constraint === "charges_pkey"
  );
}

/**
 * Adds `ops` to the period's usage and claims the charge key for them, atomically. Returns the
 * new ops_used, or null when `cap` (the hard-stop limit; null = no limit) refused: nothing
 * written. Throws a unique violation on charges_pkey (see isChargeKeyTaken) when the key is held.
 */
export async function chargeAndClaim(
  db: Db,
  ref: ChargeRef,
  periodStart: string,
  ops: number,
  cap: number | null,
  limit: number | null = null,
  expiresAt: Date | null = null,
): Promise<number | null> {
  // One statement, so all or nothing without BEGIN/COMMIT: the claim is inserted from the usage
  // upsert's result (a refused upsert writes nothing, the fresh insert obeys the cap too) and
  // without ON CONFLICT, so a key claimed concurrently fails the whole statement, undoing the upsert.
  const { rows } = await db.raw<{ rows: { ops_used: number }[] }>(
    `with bumped as (
       insert into ${TABLES.usagePeriods} as u (owner_id, period_start, ops_used)
       select cast(:owner as uuid), cast(:period as date), cast(:ops as integer)
        where cast(:cap as integer) is null or :ops <= cast(:cap as integer)
       on conflict (owner_id, period_start) do update set ops_used = u.ops_used + excluded.ops_used
        where cast(:cap as integer) is null or u.ops_used + excluded.ops_used <= cast(:cap as integer)
       returning u.ops_used
     ), claimed as (
       insert into ${TABLES.charges} (owner_id, charge_key, period_start, ops, state, bucket_used, expires_at)
       select cast(:owner as uuid), :key, cast(:period as date), cast(:ops as integer), 'reserved',
              case when bumped.ops_used - :ops >= cast(:limit as integer) then 'overage' else 'monthly' end,
              cast(:expires as timestamptz)
         from bumped
     )
     select ops_used from bumped`,
    {
      owner: ref.ownerId,
      key: ref.chargeKey,
      period: periodStart,
      ops,
      cap,
      limit,
      expires: expiresAt?.toISOString() ?? null,
    },
  );
  return rows[0]?.ops_used ?? null;
}

/**
 * Settles a reservation of `reserved` operations at `final`, atomically, if the charge still
 * holds exactly that reservation and, when `cap` is set, the usage plus the difference stays
 * within it. Returns the new ops_used, or null when a guard failed (nothing written).
 */
export async function applySettlement(
  db: Db,
  ref: ChargeRef,
  change: { reserved: number; final: number; cap: number | null },
): Promise<number | null> {
  const { reserved, final, cap } = change;
  // One statement, so all or nothing without BEGIN/COMMIT: the charge row is locked first (a
  // concurrent settle of the key then leaves no row), usage moves only from that row, and the
  // charge is marked settled only if usage moved.
  const { rows } = await db.raw<{ rows: { ops_used: number }[] }>(
    `with pending as (
       select period_start from ${TABLES.charges}
        where owner_id = :owner and charge_key = :key and state = 'reserved' and ops = :reserved
        for update
     ), bumped as (
       update ${TABLES.usagePeriods} as u set ops_used = u.ops_used + :delta
         from pending
        where u.owner_id = :owner and u.period_start = pending.period_start
          and (cast(:cap as integer) is null or u.ops_used + :delta <= cast(:cap as integer))
       returning u.ops_used
     ), settled as (
       update ${TABLES.charges} set ops = :final, state = 'settled'
        where owner_id = :owner and charge_key = :key and exists (select 1 from bumped)
     )
     select ops_used from bumped`,
    { owner: ref.ownerId, key: ref.chargeKey, reserved, final, delta: final - reserved, cap },
  );
  return rows[0]?.ops_used ?? null;
}

/** Up to `limit` holds still reserved whose expiry is at or before `now`, oldest expiry first. */
export function expiredHolds(db: Db, now: Date, limit: number): Promise<ChargeRef[]> {
  return db(TABLES.charges)
    .select({ ownerId: "owner_id", chargeKey: "charge_key" })
    .where({ state: "reserved" })
    .whereNotNull("expires_at")
    .where("expires_at", "<=", now)
    .orderBy("expires_at")
    .limit(limit);
}
