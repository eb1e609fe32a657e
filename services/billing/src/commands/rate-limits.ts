// Rate limits (issue #13; issue #30 "Limits per account"; interface-spec Errors: 429 "an endpoint
// cooldown"): token buckets per API key and per owner account, each per endpoint class, shared by
// every gateway replica through this table. A request draws on several buckets at once (its key's
// and its account's) and gets a token from all of them or from none: a refusal by the account
// bucket must not cost the key a token, nor the other way round.
//
// Why Postgres and not NATS KV: a decision is one statement that locks the request's rows and
// computes the refill from timestamps (db/store/rate-limits.ts), so there is no read-modify-write
// window and no CAS retry loop under contention (NATS KV would need get → compute →
// update-with-revision per bucket, retried on conflict, and could not take two buckets together).
// Billing already sits next to the quota rows, and a statement on two primary-key rows costs well
// under a millisecond, inside the 2 ms budget of the chat path.
import { InputError, type Knex, type Principal } from "@redline/service-kit";
import { type BucketRef, createBuckets, debitTokens, takeTokens } from "../db/store/rate-limits.js";
import { getUsage, type UsageView } from "./quota.js";

/** One bucket a request draws on. */
export interface RateLimitBucket {
  /** Free text naming the bucket's owner: the API key id, or `account:<owner id>`. */
  subject: string;
  /** The endpoint class, e.g. expensive, write, read (1-64 characters). */
  limiter: string;
  /** Bucket size in tokens (burst), >= 1. */
  capacity: number;
  /** Seconds an empty bucket takes to fill, >= 1. */
  windowSeconds: number;
}

/** One request against its buckets. */
export interface RateLimitRequest {
  /** 1 to MAX_BUCKETS buckets, each (subject, limiter) once. */
  buckets: RateLimitBucket[];
  /** 0 (default): decide one request. N > 0: record N requests already admitted on each bucket (see debitTokens). */
  debit?: number;
}

/** The most requests one debit may record (a gateway flushes every few tens of ms). */
const MAX_DEBIT = 100_000;
/** The most buckets one request may draw on (today: a key's and its account's). */
export const MAX_BUCKETS = 4;
/** A bucket that appears between creating it and taking from it (a sweep, a race) is created again this often at most. */
const MAX_CREATE_ATTEMPTS = 3;

/** One bucket after the decision; times in seconds. */
export interface BucketDecision {
  /** Whole tokens left. */
  remaining: number;
  /** Until this bucket has one token; 0 when it has. */
  retryAfterSeconds: number;
  /** Until this bucket is full again. */
  resetSeconds: number;
  /** This bucket had no token for the request (a reason of a refusal; always false for a debit). */
  exhausted: boolean;
}

/** The limiter's answer; times in seconds. */
export interface RateLimitDecision {
  /** A token was taken from every bucket (always true for a debit). */
  allowed: boolean;
  /** Until every bucket has a token; 0 when all have. */
  retryAfterSeconds: number;
  /** Each bucket, in the order of the request's buckets. */
  buckets: BucketDecision[];
  /** The owner's usage when refused (X-Usage-* of the 429); undefined when allowed. */
  usage?: UsageView;
}

function validate(req: RateLimitRequest): number {
  if (req.buckets.length < 1 || req.buckets.length > MAX_BUCKETS) {
    throw new InputError(`buckets must list 1 to ${MAX_BUCKETS} buckets`);
  }
  const seen = new Set<string>();
  for (const b of req.buckets) {
    if (!b.subject || !b.limiter || b.limiter.length > 64) {
      throw new InputError("each bucket needs a subject and a limiter (1-64 characters)");
    }
    if (!(b.capacity >= 1) || !(b.windowSeconds >= 1)) {
      throw new InputError("capacity and window_seconds must be at least 1");
    }
    const id = JSON.stringify([b.subject, b.limiter]);
    if (seen.has(id)) throw new InputError("each bucket (subject, limiter) may be listed once");
    seen.add(id);
  }
  const debit = req.debit ?? 0;
  if (!Number.isInteger(debit) || debit < 0 || debit > MAX_DEBIT) {
    throw new InputError(`debit must be an integer from 0 to ${MAX_DEBIT}`);
  }
  return debit;
}

/**
 * Takes one token from every bucket of the request (refill rate = capacity / windowSeconds per
 * second) or from none when any is empty; with `debit` records that many early admissions on
 * each bucket (always allowed; a bucket may go negative). InputError (400) for no buckets or more
 * than MAX_BUCKETS, one listed twice, an empty subject or limiter, capacity/window below 1, or a
 * debit outside 0..MAX_DEBIT. A refusal changes nothing but the refill bookkeeping, names the
 * exhausted buckets, and carries the owner's usage read after it.
 */
export async function consumeRateLimit(
  db: Knex,
  principal: Principal,
  req: RateLimitRequest,
): Promise<RateLimitDecision> {
  const debit = validate(req);
  const refs: BucketRef[] = req.buckets.map((b) => ({
    subject: b.subject,
    limiter: b.limiter,
    capacity: b.capacity,
    refillPerSecond: b.capacity / b.windowSeconds,
  }));
  // Each bucket's row, with its tokens left and the level it had before this request.
  let rows: { subject: string; limiter: string; tokens: number; level: number }[] | null;
  if (debit > 0) {
    rows = (await debitTokens(db, refs, debit)).map((r) => ({ ...r, level: r.tokens + debit }));
  } else {
    rows = await takeTokens(db, refs);
    for (let attempt = 0; !rows && attempt < MAX_CREATE_ATTEMPTS; attempt++) {
      await createBuckets(db, refs);
      rows = await takeTokens(db, refs);
    }
    if (!rows) throw new Error("rate limit buckets vanished while being created");
  }
  const byId = new Map(rows.map((r) => [JSON.stringify([r.subject, r.limiter]), r]));
  const buckets = refs.map((ref): BucketDecision => {
    const row = byId.get(JSON.stringify([ref.subject, ref.limiter]));
    if (!row) throw new Error(`no row for bucket ${ref.limiter}`);
    const rate = ref.refillPerSecond;
    return {
      remaining: Math.max(0, Math.floor(row.tokens)),
      retryAfterSeconds: row.tokens >= 1 ? 0 : (1 - row.tokens) / rate,
      resetSeconds: Math.max(0, (ref.capacity - row.tokens) / rate),
      exhausted: debit === 0 && row.level < 1,
    };
  });
  const allowed = !buckets.some((b) => b.exhausted);
  const decision: RateLimitDecision = {
    allowed,
    retryAfterSeconds: Math.max(...buckets.map((b) => b.retryAfterSeconds)),
    buckets,
  };
  if (!allowed) decision.usage = await getUsage(db, principal);
  return decision;
}
