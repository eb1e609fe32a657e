// Token buckets of the gateway's rate limits: all SQL of the limiter. One statement per request,
// on every keyed request's critical path, so no read-modify-write and no transaction.
import type { Knex } from "@redline/service-kit";
import { type RateLimitBucketRow, TABLES } from "../tables.js";

type Db = Knex | Knex.Transaction;

/** One bucket and its policy: `capacity` tokens, refilled continuously at `refillPerSecond`. */
export interface BucketRef {
  subject: string;
  limiter: string;
  capacity: number;
  refillPerSecond: number;
}

/**
 * Takes one token from the bucket, creating it full when absent, in ONE atomic upsert: the
 * refill is computed in SQL from the stored timestamp (level = min(capacity, tokens + elapsed ×
 * rate)), and the row lock of ON CONFLICT DO UPDATE serializes concurrent requests, so N
 * gateways racing on the same bucket can never take more tokens than it holds. A refused
 * request stores the refilled level without taking a token. Returns the tokens left (fractional)
 * and whether a token was taken.
 */
export async function takeToken(db: Db, ref: BucketRef): Promise<Pick<RateLimitBucketRow, "tokens" | "allowed">> {
  // Every SET expression reads the row as it was before the update, so `level` is the same in all three.
  const level = `least(cast(:capacity as float8),
      b.tokens + greatest(0, cast(extract(epoch from excluded.updated_at - b.updated_at) as float8)) * cast(:rate as float8))`;
  const { rows } = await db.raw<{ rows: Pick<RateLimitBucketRow, "tokens" | "allowed">[] }>(
    `insert into ${TABLES.rateLimitBuckets} as b (subject, limiter, tokens, allowed, updated_at)
     values (:subject, :limiter, cast(:capacity as float8) - 1, true, clock_timestamp())
     on conflict (subject, limiter) do update set
       tokens = case when ${level} >= 1 then ${level} - 1 else ${level} end,
       allowed = ${level} >= 1,
       updated_at = greatest(b.updated_at, excluded.updated_at)
     returning tokens, allowed`,
    { subject: ref.subject, limiter: ref.limiter, capacity: ref.capacity, rate: ref.refillPerSecond },
  );
  return rows[0];
}

/**
 * Records `debit` requests a gateway already admitted (its early admissions, batched): the
 * tokens are taken unconditionally in one atomic upsert, after the same refill, and the bucket
 * may go below zero, so the debt delays the next requests instead of being forgotten.
 */
export async function debitTokens(
  db: Db,
  ref: BucketRef,
  debit: number,
): Promise<Pick<RateLimitBucketRow, "tokens" | "allowed">> {
  const level = `least(cast(:capacity as float8),
      b.tokens + greatest(0, cast(extract(epoch from excluded.updated_at - b.updated_at) as float8)) * cast(:rate as float8))`;
  const { rows } = await db.raw<{ rows: Pick<RateLimitBucketRow, "tokens" | "allowed">[] }>(
    `insert into ${TABLES.rateLimitBuckets} as b (subject, limiter, tokens, allowed, updated_at)
     values (:subject, :limiter, cast(:capacity as float8) - :debit, true, clock_timestamp())
     on conflict (subject, limiter) do update set
       tokens = ${level} - :debit,
       allowed = true,
       updated_at = greatest(b.updated_at, excluded.updated_at)
     returning tokens, allowed`,
    { subject: ref.subject, limiter: ref.limiter, capacity: ref.capacity, rate: ref.refillPerSecond, debit },
  );
  return rows[0];
}
