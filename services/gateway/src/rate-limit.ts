// Rate limits (issue #13; interface-spec Errors: 429 "an endpoint cooldown", rule 2): one token
// bucket per API key and endpoint class, kept by billing (ConsumeRateLimit: one atomic upsert in
// Postgres, see services/billing/src/commands/rate-limits.ts for why Postgres), so every gateway
// replica draws from the same bucket. Each keyed route declares its class where it is declared
// (endpoint() in api/shared/routes.ts).
//
// Headers follow draft-ietf-httpapi-ratelimit-headers-10 (September 2025), the structured-field
// syntax: `RateLimit-Policy: "<class>";q=<capacity>;w=<window s>` names the policy and
// `RateLimit: "<class>";r=<whole tokens left>;t=<seconds until the bucket is full again>`.
import { status as GrpcStatus } from "@grpc/grpc-js";
import { RedlineError, required } from "@redline/service-kit";
import type { Request, RequestHandler, Response } from "express";
import type { LimiterClass, RateLimitPolicy, RateLimitsConfig } from "./config.js";
import type { GatewayContext } from "./context.js";
import { requestState } from "./request-context.js";

/**
 * Default deadline of a ConsumeRateLimit call (GatewayConfig.rateLimitTimeoutMs). Past it the
 * request goes through (fail open): a limiter that is slow or down must not take the API down with it.
 */
export const DEFAULT_RATE_LIMIT_TIMEOUT_MS = 500;

/** 429 of an exhausted bucket: `{detail, code: "rate_limited", limiter, retry_after}` + Retry-After, X-Usage-*, RateLimit*. */
export class RateLimitedError extends RedlineError {
  constructor(
    limiter: LimiterClass,
    policy: RateLimitPolicy,
    retryAfterSeconds: number,
    usage: Record<string, number>,
  ) {
    const retryAfter = Math.max(1, Math.ceil(retryAfterSeconds));
    super(
      429,
      GrpcStatus.RESOURCE_EXHAUSTED,
      `Rate limit exceeded for ${limiter} requests (${policy.capacity} per ${policy.windowSeconds} s per API key); retry in ${retryAfter} s`,
      {
        body: { code: "rate_limited", limiter, retry_after: retryAfter },
        headers: {
          "Retry-After": String(retryAfter),
          "X-Usage-Limit": String(usage.monthly_limit),
          "X-Usage-Used": String(usage.monthly_used),
          "X-Usage-Remaining": String(usage.monthly_remaining),
        },
      },
    );
  }
}

/** `RateLimit-Policy` of a class (draft-10 §5: a List of quota policy Items). */
export function policyHeader(limiter: LimiterClass, policy: RateLimitPolicy): string {
  return `"${limiter}";q=${policy.capacity};w=${policy.windowSeconds}`;
}

/** `RateLimit` of a class (draft-10 §4): remaining whole tokens, seconds until full. */
export function rateLimitHeader(limiter: LimiterClass, remaining: number, resetSeconds: number): string {
  return `"${limiter}";r=${Math.max(0, remaining)};t=${Math.max(0, Math.ceil(resetSeconds))}`;
}

/** A bucket with fewer whole tokens than this (or this share of its capacity) left is decided strictly. */
const STRICT_ZONE_MIN = 10;
const STRICT_ZONE_SHARE = 0.1;
/** How long billing's last word on a bucket may stand in for a new one. */
const MIRROR_FRESH_MS = 1000;
/** Early admissions are sent to billing as one debit per bucket at most this often. */
const DEBIT_FLUSH_MS = 50;
const MIRROR_MAX_ENTRIES = 10_000;

/** What this gateway last heard from billing about one bucket. */
interface MirroredBucket {
  remaining: number;
  resetSeconds: number;
  /** When the recorded answer's question was sent (Date.now()); freshness counts from it. */
  at: number;
  /** The order of that question (BucketMirror.ask): an answer to an older one never replaces it. */
  asked: number;
  /** Requests admitted early, not yet sent to billing (the next debit). */
  unsent: number;
  /** Requests admitted early, sent in a debit billing has not answered yet. */
  inflight: number;
  /** The pending flush of `unsent`. */
  timer?: NodeJS.Timeout;
}

/**
 * The gateway's view of the buckets it used in the last second, so that a request far from its
 * limit does not wait for billing: every billing round trip on a loaded machine costs several
 * ms, and the chat path has a 2 ms budget. Such a request is admitted at once and its token is
 * still taken from the shared bucket, in the background: early admissions of a bucket are
 * batched into one debit every DEBIT_FLUSH_MS (one statement for many requests, none on the
 * request's path). Only while billing's last answer is under a second old and leaves more than
 * the strict zone (max(10, 10 % of capacity)) beyond the admissions not yet answered; otherwise
 * the request waits for billing's decision. So the shared
 * bucket stays the one authority: near the limit every replica asks it first, and early
 * admissions can overshoot only when other replicas drained the strict zone within that second;
 * the debit then takes the bucket below zero, so the overshoot delays the next requests instead
 * of being forgiven. Small limits (capacity <= 10, as in tests) are always strict. A gateway
 * that stops loses at most DEBIT_FLUSH_MS of unsent debits.
 */
class BucketMirror {
  private readonly buckets = new Map<string, MirroredBucket>();
  private questions = 0;

  /** Numbers a question to billing, at the moment it is sent (see record). */
  ask(): { asked: number; at: number } {
    return { asked: ++this.questions, at: Date.now() };
  }

  /** The bucket's mirror when billing spoke of it within MIRROR_FRESH_MS. */
  fresh(id: string): MirroredBucket | undefined {
    const seen = this.buckets.get(id);
    return seen && Date.now() - seen.at < MIRROR_FRESH_MS ? seen : undefined;
  }

  /**
   * Takes billing's answer to `question`; keeps the in-flight count of the entry (early admissions
   * still out). Answers can arrive out of order (a debit sent before a refusal may be answered
   * after it): one to an older question is dropped, so a refusal is never undone by a stale count.
   */
  record(
    id: string,
    decision: { remaining: number; resetSeconds: number },
    question: { asked: number; at: number },
  ): void {
    const seen = this.buckets.get(id);
    if (seen) {
      if (question.asked < seen.asked) return;
      seen.remaining = decision.remaining;
      seen.resetSeconds = decision.resetSeconds;
      seen.at = question.at;
      seen.asked = question.asked;
      return;
    }
    if (this.buckets.size >= MIRROR_MAX_ENTRIES) {
      const now = Date.now();
      for (const [k, v] of this.buckets) {
        if (now - v.at >= MIRROR_FRESH_MS && v.inflight === 0 && v.unsent === 0) this.buckets.delete(k);
      }
      if (this.buckets.size >= MIRROR_MAX_ENTRIES) return;
    }
    this.buckets.set(id, { ...decision, ...question, unsent: 0, inflight: 0 });
  }

  /** Drops the mirror (billing unreachable): the next request asks billing. */
  forget(id: string): void {
    this.buckets.delete(id);
  }
}

/** Where a deferred decision waits for the idempotency middleware (res.locals key). */
const PENDING = "redlineRateLimit";

/**
 * The decision the limiter deferred for this request (see rateLimiter): the 429 to answer, or
 * null to go on. Resolves at once when nothing was deferred.
 */
export function rateLimitDecision(res: Response): Promise<RateLimitedError | null> {
  return (res.locals[PENDING] as Promise<RateLimitedError | null> | undefined) ?? Promise.resolve(null);
}

/**
 * Middleware factory: `limit(cls, {defer})` takes one token of the caller's `cls` bucket after auth.
 * Sets RateLimit-Policy and RateLimit on the response (so they ride on every answer of the
 * route, errors included), and answers 429 (RateLimitedError) when the bucket is empty, before
 * the body is read. With `defer(req)` true (an idempotent route called with an Idempotency-Key)
 * the decision is not awaited here but by the idempotency middleware, together with its own
 * BeginIdempotency: the two billing round trips overlap instead of adding up on the chat path
 * (issue #13's 2 ms budget). The price: such a request's body is read before the 429, and a
 * malformed body there is answered without waiting for the limiter. With `limits` false every
 * route passes untouched; when billing does not answer within `ctx.cfg.rateLimitTimeoutMs` the request passes
 * with a warn log and no RateLimit header (fail open).
 */
export function rateLimiter(ctx: GatewayContext, limits: RateLimitsConfig | false) {
  const mirror = new BucketMirror();
  return (limiter: LimiterClass, opts: { defer?: (req: Request) => boolean } = {}): RequestHandler => {
    if (!limits) return (_req, _res, next) => next();
    const policy = limits[limiter];
    const timeoutMs = ctx.cfg.rateLimitTimeoutMs ?? DEFAULT_RATE_LIMIT_TIMEOUT_MS;
    const policyValue = policyHeader(limiter, policy);
    // The last tokens of a bucket are always decided by billing, before the request runs.
    const strictZone = Math.max(STRICT_ZONE_MIN, Math.ceil(policy.capacity * STRICT_ZONE_SHARE));
    const decide = async (res: Response): Promise<RateLimitedError | null> => {
      const state = requestState(res);
      const principal = state.principal;
      if (!principal) return null;
      res.setHeader("RateLimit-Policy", policyValue);
      // Per key; a principal without a key id (none today) shares its owner's bucket.
      const subject = state.keyId || `owner:${principal.ownerId}`;
      const consume = (debit: number) =>
        ctx.billing.consumeRateLimit(
          { subject, limiter, capacity: policy.capacity, windowSeconds: policy.windowSeconds, debit },
          { principal, requestId: state.requestId, timeoutMs, trace: state.trace },
        );
      const id = `${subject} ${limiter}`;
      const seen = mirror.fresh(id);
      if (seen && seen.remaining - seen.unsent - seen.inflight > strictZone) {
        // Far from the limit: admit now, debit the shared bucket in the background (see BucketMirror).
        seen.unsent++;
        res.setHeader(
          "RateLimit",
          rateLimitHeader(limiter, seen.remaining - seen.unsent - seen.inflight, seen.resetSeconds),
        );
        seen.timer ??= setTimeout(() => {
          const debit = seen.unsent;
          seen.timer = undefined;
          seen.unsent = 0;
          seen.inflight += debit;
          const question = mirror.ask();
          consume(debit).then(
            (decision) => {
              seen.inflight -= debit;
              mirror.record(id, decision, question);
            },
            (err) => {
              seen.inflight -= debit;
              mirror.forget(id);
              state.log.warn(
                { err, limiter, debit },
                "rate limiter unavailable: early admissions not debited (fail open)",
              );
            },
          );
        }, DEBIT_FLUSH_MS).unref();
        return null;
      }
      let decision: Awaited<ReturnType<typeof consume>>;
      const question = mirror.ask();
      try {
        decision = await consume(0);
      } catch (err) {
        mirror.forget(id);
        state.log.warn({ err, limiter }, "rate limiter unavailable: request let through unlimited (fail open)");
        return null;
      }
      mirror.record(id, decision, question);
      if (!res.headersSent) {
        res.setHeader("RateLimit", rateLimitHeader(limiter, decision.remaining, decision.resetSeconds));
      }
      if (decision.allowed) return null;
      const usage = required(decision.usage, "usage");
      return new RateLimitedError(limiter, policy, decision.retryAfterSeconds, {
        monthly_limit: usage.monthlyLimit,
        monthly_used: usage.monthlyUsed,
        monthly_remaining: usage.monthlyRemaining,
      });
    };
    return async (req, res, next) => {
      const pending = decide(res);
      if (opts.defer?.(req)) {
        res.locals[PENDING] = pending;
        return next();
      }
      const refusal = await pending;
      next(refusal ?? undefined);
    };
  };
}
