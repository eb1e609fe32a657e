// Usage periods and charges: all SQL of the quota. Reserve and settle sit on every chat turn's
// critical path (issue #5), so each write is one self-contained statement (no BEGIN/COMMIT).
import type { Knex } from "@redline/service-kit";
import { type ChargeRow, TABLES, type UsagePeriodRow } from "../tables.js";

type Db = Knex | Knex.Transaction;

/** One charge: the owner billed and the idempotency key of the operation. */
export interface ChargeRef {
  ownerId: string;
  chargeKey: string;
}

/** One read about an owner and a charge key; nulls where a row is absent. */
export interface ChargeSnapshot {
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

/** ops_used of the owner in the period starting `periodStart` (YYYY-MM-DD); 0 without a row. */
export async function usedIn(db: Db, ownerId: string, periodStart: string): Promise<number> {
  const row = await db<UsagePeriodRow>(TABLES.usagePeriods)
    .where({ owner_id: ownerId, period_start: periodStart })
    .first();
  return row?.ops_used ?? 0;
}

/**
 * Reads the owner's plan, the current period's usage, and the charge with its period's usage.
 * `lock` takes FOR UPDATE on the charge and that usage row (inside a transaction).
 */
export async function readCharge(db: Db, ref: ChargeRef, periodStart: string, lock = false): Promise<ChargeSnapshot> {
  const forUpdate = lock ? "for update" : "";
  // One statement instead of one per table: every round trip here is on a chat turn's critical path.
  const { rows } = await db.raw<{ rows: ChargeSnapshot[] }>(
    `select (select plan from ${TABLES.accounts} where id = :owner) as plan,
            (select ops_used from ${TABLES.usagePeriods}
              where owner_id = :owner and period_start = :period) as current_used,
            c.state, c.ops, u.ops_used as charge_used
       from (select 1) as one
       left join lateral (select state, ops, period_start from ${TABLES.charges}
                           where owner_id = :owner and charge_key = :key ${forUpdate}) as c on true
       left join lateral (select ops_used from ${TABLES.usagePeriods}
                           where owner_id = :owner and period_start = c.period_start ${forUpdate}) as u on true`,
    { owner: ref.ownerId, key: ref.chargeKey, period: periodStart },
  );
  return rows[0];
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
       insert into ${TABLES.charges} (owner_id, charge_key, period_start, ops, state)
       select cast(:owner as uuid), :key, cast(:period as date), cast(:ops as integer), 'reserved' from bumped
     )
     select ops_used from bumped`,
    { owner: ref.ownerId, key: ref.chargeKey, period: periodStart, ops, cap },
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
