// Rate limits (issue #13; issue #30 "Limits per account"; interface-spec Errors: 429 "an endpoint
// cooldown", rule 2): every keyed request takes one token from its API key's bucket AND one from
// its owner account's bucket (the organization of an organization key, else the user), each per
// endpoint class. Per key alone, keys would be the unit of the limit and an account could
// multiply its rate by making keys; the account bucket (ACCOUNT_LIMIT_FACTOR times the key's by
// default) caps what all its keys take together, while one key can still use its whole rate.
// The billing process keeps the buckets (EdgePolicyService ConsumeRateLimit: one atomic statement over both rows in Postgres,
// both tokens or neither, see services/billing/src/commands/rate-limits.ts), so every gateway
// replica draws from the same buckets. Each keyed route declares its class where it is declared
// (endpoint() in api/shared/routes.ts).
//
// Headers follow draft-ietf-httpapi-ratelimit-headers-10 (September 2025), the structured-field
// syntax, one list item per bucket: `RateLimit-Policy: "<class>";q=<capacity>;w=<window s>,
// "<class>-account";q=…;w=…` names the policies and `RateLimit: "<class>";r=<whole tokens
// left>;t=<seconds until the bucket is full again>, "<class>-account";r=…;t=…` their state.
import { status as GrpcStatus } from "@grpc/grpc-js";
import type { edgePolicyV1 } from "@redline/grpc-stubs";
import { RedlineError, required } from "@redline/service-kit";
import type { Request, RequestHandler, Response } from "express";
import { accountLimitsFor, type LimiterClass, type RateLimitPolicy, type RateLimitsConfig } from "./config.js";
import type { GatewayContext } from "./context.js";
import { requestState } from "./request-context.js";

/**
 * Default deadline of a ConsumeRateLimit call (GatewayConfig.rateLimitTimeoutMs). Past it the
 * request goes through (fail open): a limiter that is slow or down must not take the API down with it.
 */
export const DEFAULT_RATE_LIMIT_TIMEOUT_MS = 500;

/** Which of a request's buckets: its API key's, or its owner account's (all the account's keys together). */
export type BucketKind = "key" | "account";

/** What a 429 says each bucket is, after "per". */
const BUCKET_UNIT: Record<BucketKind, string> = {
  key: "API key",
  account: "account, all its keys together",
};

/**
 * 429 of an exhausted bucket: `{detail, code: "rate_limited", limiter, bucket, retry_after}` +
 * Retry-After, X-Usage-*, RateLimit*; `bucket` says which ran out ("key" or "account").
 */
export class RateLimitedError extends RedlineError {
  constructor(
    limiter: LimiterClass,
    bucket: BucketKind,
    policy: RateLimitPolicy,
    retryAfterSeconds: number,
    usage: Record<string, number>,
  ) {
    const retryAfter = Math.max(1, Math.ceil(retryAfterSeconds));
    super(
      429,
      GrpcStatus.RESOURCE_EXHAUSTED,
      `Rate limit exceeded for ${limiter} requests (${policy.capacity} per ${policy.windowSeconds} s per ${BUCKET_UNIT[bucket]}); retry in ${retryAfter} s`,
      {
        body: { code: "rate_limited", limiter, bucket, retry_after: retryAfter },
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

/** The policy name of a class's bucket in the headers: the class for the key's, `<class>-account` for the account's. */
export function policyName(limiter: LimiterClass, bucket: BucketKind): string {
  return bucket === "key" ? limiter : `${limiter}-account`;
}

/** One `RateLimit-Policy` list item (draft-10 §5: a quota policy Item). */
export function policyHeader(name: string, policy: RateLimitPolicy): string {
  return `"${name}";q=${policy.capacity};w=${policy.windowSeconds}`;
}

/** One `RateLimit` list item (draft-10 §4): remaining whole tokens, seconds until full. */
export function rateLimitHeader(name: string, remaining: number, resetSeconds: number): string {
  return `"${name}";r=${Math.max(0, remaining)};t=${Math.max(0, Math.ceil(resetSeconds))}`;
}

/**
 * The subject of an owner account's bucket: free text beside the key ids (UUIDs) of key buckets,
 * so the table needs no second column and no migration.
 */
export function accountSubject(ownerId: string): string {
  return `account:${ownerId}`;
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
 * limits does not wait for billing: every billing round trip on a loaded machine costs several
 * ms, and the chat path has a 2 ms budget. Such a request is admitted at once and its tokens are
 * still taken from the shared buckets, in the background: early admissions of a bucket are
 * batched into one debit every DEBIT_FLUSH_MS (one statement for many requests, none on the
 * request's path). Only while billing's last answer on EACH of the request's buckets (key and
 * account) is under a second old and leaves more than that bucket's strict zone (max(10, 10 % of
 * capacity)) beyond the admissions not yet answered; when either is near its limit the request
 * waits for billing's decision on both. So the shared buckets stay the one authority: near a
 * limit every replica asks first, and early admissions can overshoot only when other replicas
 * drained the strict zone within that second; the debit then takes the bucket below zero, so the
 * overshoot delays the next requests instead of being forgiven. Small limits (capacity <= 10, as
 * in tests) are always strict. A gateway that stops loses at most DEBIT_FLUSH_MS of unsent debits.
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
    this.buckets.set(id, {
      remaining: decision.remaining,
      resetSeconds: decision.resetSeconds,
      ...question,
      unsent: 0,
      inflight: 0,
    });
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

/** One of a request's buckets as the limiter uses it. */
interface RequestBucket {
  kind: BucketKind;
  /** The mirror's key. */
  id: string;
  /** As sent to billing. */
  spec: edgePolicyV1.RateLimitBucket;
  policy: RateLimitPolicy;
  name: string;
  strictZone: number;
}

/** Of a refusal's exhausted buckets, the one whose token comes back last (the key's on a tie). */
function refusingBucket(buckets: RequestBucket[], states: edgePolicyV1.RateLimitBucketState[]): number {
  let worst = -1;
  states.forEach((s, i) => {
    if (s.exhausted && (worst < 0 || s.retryAfterSeconds > states[worst].retryAfterSeconds)) worst = i;
  });
  return worst >= 0 ? worst : buckets.length - 1;
}

/**
 * Middleware factory: `limit(cls, {defer})` takes one token of the caller's key bucket and one of
 * its account bucket of class `cls` after auth, both or neither (`limits` per key, `accountLimits`
 * per account, default accountLimitsFor(limits)). Sets RateLimit-Policy and RateLimit (one list item per bucket) on the response
 * (so they ride on every answer of the route, errors included), and answers 429
 * (RateLimitedError, naming the bucket that ran out) when either bucket is empty, before the body
 * is read. With `defer(req)` true (an idempotent route called with an Idempotency-Key) the
 * decision is not awaited here but by the idempotency middleware, together with its own
 * BeginIdempotency: the two billing round trips overlap instead of adding up on the chat path
 * (issue #13's 2 ms budget). The price: such a request's body is read before the 429, and a
 * malformed body there is answered without waiting for the limiter. With `limits` false every
 * route passes untouched; when billing does not answer within `ctx.cfg.rateLimitTimeoutMs` the
 * request passes with a warn log and no RateLimit header (fail open).
 */
export function rateLimiter(
  ctx: GatewayContext,
  limits: RateLimitsConfig | false,
  accountLimits: RateLimitsConfig | undefined,
) {
  const mirror = new BucketMirror();
  const perAccount = limits ? (accountLimits ?? accountLimitsFor(limits)) : undefined;
  return (limiter: LimiterClass, opts: { defer?: (req: Request) => boolean } = {}): RequestHandler => {
    if (!limits || !perAccount) return (_req, _res, next) => next();
    const policies: Record<BucketKind, RateLimitPolicy> = { key: limits[limiter], account: perAccount[limiter] };
    const timeoutMs = ctx.cfg.rateLimitTimeoutMs ?? DEFAULT_RATE_LIMIT_TIMEOUT_MS;
    const kinds: BucketKind[] = ["key", "account"];
    const policyValue = kinds.map((k) => policyHeader(policyName(limiter, k), policies[k])).join(", ");
    // The last tokens of a bucket are always decided by billing, before the request runs.
    const strictZoneOf = (p: RateLimitPolicy) => Math.max(STRICT_ZONE_MIN, Math.ceil(p.capacity * STRICT_ZONE_SHARE));
    const decide = async (res: Response): Promise<RateLimitedError | null> => {
      const state = requestState(res);
      const principal = state.principal;
      if (!principal) return null;
      res.setHeader("RateLimit-Policy", policyValue);
      const subjects: Record<BucketKind, string> = {
        // Per key; a principal without a key id (none today) has its owner's name on its key bucket.
        key: state.keyId || `owner:${principal.ownerId}`,
        account: accountSubject(principal.ownerId),
      };
      const buckets: RequestBucket[] = kinds.map((kind) => {
        const policy = policies[kind];
        const spec = {
          subject: subjects[kind],
          limiter,
          capacity: policy.capacity,
          windowSeconds: policy.windowSeconds,
        };
        return {
          kind,
          id: `${spec.subject} ${limiter}`,
          spec,
          policy,
          name: policyName(limiter, kind),
          strictZone: strictZoneOf(policy),
        };
      });
      const consume = (of: RequestBucket[], debit: number) =>
        ctx.edgePolicy.consumeRateLimit(
          { buckets: of.map((b) => b.spec), debit },
          { principal, requestId: state.requestId, timeoutMs, trace: state.trace },
        );
      const left = (m: MirroredBucket) => m.remaining - m.unsent - m.inflight;
      const seen = buckets.map((b) => mirror.fresh(b.id));
      if (seen.every((m, i): m is MirroredBucket => m !== undefined && left(m) > buckets[i].strictZone)) {
        // Far from both limits: admit now, debit each shared bucket in the background (see BucketMirror).
        res.setHeader(
          "RateLimit",
          buckets
            .map((b, i) => {
              const m = seen[i] as MirroredBucket;
              m.unsent++;
              return rateLimitHeader(b.name, left(m), m.resetSeconds);
            })
            .join(", "),
        );
        buckets.forEach((b, i) => {
          const m = seen[i] as MirroredBucket;
          m.timer ??= setTimeout(() => {
            const debit = m.unsent;
            m.timer = undefined;
            m.unsent = 0;
            m.inflight += debit;
            const question = mirror.ask();
            consume([b], debit).then(
              (decision) => {
                m.inflight -= debit;
                mirror.record(b.id, required(decision.buckets[0], "buckets"), question);
              },
              (err) => {
                m.inflight -= debit;
                mirror.forget(b.id);
                state.log.warn(
                  { err, limiter, bucket: b.kind, debit },
                  "rate limiter unavailable: early admissions not debited (fail open)",
                );
              },
            );
          }, DEBIT_FLUSH_MS).unref();
        });
        return null;
      }
      let decision: edgePolicyV1.ConsumeRateLimitResponse;
      const question = mirror.ask();
      try {
        decision = await consume(buckets, 0);
        if (decision.buckets.length !== buckets.length)
          throw new Error("ConsumeRateLimit answered another bucket count");
      } catch (err) {
        for (const b of buckets) mirror.forget(b.id);
        state.log.warn({ err, limiter }, "rate limiter unavailable: request let through unlimited (fail open)");
        return null;
      }
      for (const [i, b] of buckets.entries()) mirror.record(b.id, decision.buckets[i], question);
      if (!res.headersSent) {
        res.setHeader(
          "RateLimit",
          buckets
            .map((b, i) => rateLimitHeader(b.name, decision.buckets[i].remaining, decision.buckets[i].resetSeconds))
            .join(", "),
        );
      }
      if (decision.allowed) return null;
      const usage = required(decision.usage, "usage");
      const refused = buckets[refusingBucket(buckets, decision.buckets)];
      return new RateLimitedError(limiter, refused.kind, refused.policy, decision.retryAfterSeconds, {
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
