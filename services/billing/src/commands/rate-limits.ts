// Rate limits (issue #13; interface-spec Errors: 429 "an endpoint cooldown"): one token bucket
// per API key and endpoint class, shared by every gateway replica through this table.
//
// Why Postgres and not NATS KV: the bucket is one row updated by one atomic upsert that computes
// the refill from timestamps (db/store/rate-limits.ts), so there is no read-modify-write window
// and no CAS retry loop under contention (NATS KV would need get → compute → update-with-revision,
// retried on conflict: two round trips at best, unbounded under a burst on one key). Billing
// already sits next to the quota rows, and a single-row upsert on a primary key costs well
// under a millisecond, inside the 2 ms budget of the chat path.
import { InputError, type Knex, type Principal } from "@redline/service-kit";
import { debitTokens, takeToken } from "../db/store/rate-limits.js";
import { getUsage, type UsageView } from "./quota.js";

/** One request against a bucket. */
export interface RateLimitRequest {
  /** The API key id. */
  subject: string;
  /** The endpoint class, e.g. expensive, write, read (1-64 characters). */
  limiter: string;
  /** Bucket size in tokens (burst), >= 1. */
  capacity: number;
  /** Seconds an empty bucket takes to fill, >= 1. */
  windowSeconds: number;
  /** 0 (default): decide one request. N > 0: record N requests already admitted (see debitTokens). */
  debit?: number;
}

/** The most requests one debit may record (a gateway flushes every few tens of ms). */
const MAX_DEBIT = 100_000;

/** The limiter's answer; times in seconds. */
export interface RateLimitDecision {
  allowed: boolean;
  /** Whole tokens left. */
  remaining: number;
  /** Until one token is available; 0 when one is. */
  retryAfterSeconds: number;
  /** Until the bucket is full again. */
  resetSeconds: number;
  /** The owner's usage when refused (X-Usage-* of the 429); undefined when allowed. */
  usage?: UsageView;
}

/**
 * Takes one token from the caller's bucket (refill rate = capacity / windowSeconds per second),
 * or with `debit` records that many early admissions (always allowed; the bucket may go
 * negative). InputError (400) for an empty subject or limiter, capacity/window below 1, or a
 * debit outside 0..MAX_DEBIT. Refusals change nothing but the refill bookkeeping and carry the
 * usage read after the refusal.
 */
export async function consumeRateLimit(
  db: Knex,
  principal: Principal,
  req: RateLimitRequest,
): Promise<RateLimitDecision> {
  if (!req.subject || !req.limiter || req.limiter.length > 64) {
    throw new InputError("subject and limiter (1-64 characters) are required");
  }
  if (!(req.capacity >= 1) || !(req.windowSeconds >= 1)) {
    throw new InputError("capacity and window_seconds must be at least 1");
  }
  const debit = req.debit ?? 0;
  if (!Number.isInteger(debit) || debit < 0 || debit > MAX_DEBIT) {
    throw new InputError(`debit must be an integer from 0 to ${MAX_DEBIT}`);
  }
  const rate = req.capacity / req.windowSeconds;
  const bucket = { subject: req.subject, limiter: req.limiter, capacity: req.capacity, refillPerSecond: rate };
  const { tokens, allowed } = debit > 0 ? await debitTokens(db, bucket, debit) : await takeToken(db, bucket);
  const decision: RateLimitDecision = {
    allowed,
    remaining: Math.max(0, Math.floor(tokens)),
    retryAfterSeconds: tokens >= 1 ? 0 : (1 - tokens) / rate,
    resetSeconds: Math.max(0, (req.capacity - tokens) / rate),
  };
  if (!allowed) decision.usage = await getUsage(db, principal);
  return decision;
}
