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
import type { RequestHandler } from "express";
import type { LimiterClass, RateLimitPolicy, RateLimitsConfig } from "./config.js";
import type { GatewayContext } from "./context.js";
import { requestState } from "./request-context.js";

/**
 * Deadline of a ConsumeRateLimit call. Past it the request goes through (fail open): a limiter
 * that is slow or down must not take the API down with it.
 */
const CONSUME_TIMEOUT_MS = 500;

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

/**
 * Middleware factory: `limit(cls)` takes one token of the caller's `cls` bucket after auth and
 * before the body is read. Sets RateLimit-Policy and RateLimit on the response (so they ride on
 * every answer of the route, errors included), and answers 429 (RateLimitedError) when the bucket
 * is empty. With `limits` false every route passes untouched; when billing does not answer in
 * CONSUME_TIMEOUT_MS the request passes with a warn log and no RateLimit header (fail open).
 */
export function rateLimiter(ctx: GatewayContext, limits: RateLimitsConfig | false) {
  return (limiter: LimiterClass): RequestHandler => {
    if (!limits) return (_req, _res, next) => next();
    const policy = limits[limiter];
    const policyValue = policyHeader(limiter, policy);
    return async (_req, res, next) => {
      const state = requestState(res);
      const principal = state.principal;
      if (!principal) return next();
      res.setHeader("RateLimit-Policy", policyValue);
      let decision: Awaited<ReturnType<GatewayContext["billing"]["consumeRateLimit"]>>;
      try {
        decision = await ctx.billing.consumeRateLimit(
          {
            // Per key; a principal without a key id (none today) shares its owner's bucket.
            subject: state.keyId || `owner:${principal.ownerId}`,
            limiter,
            capacity: policy.capacity,
            windowSeconds: policy.windowSeconds,
          },
          { principal, requestId: state.requestId, timeoutMs: CONSUME_TIMEOUT_MS },
        );
      } catch (err) {
        state.log.warn({ err, limiter }, "rate limiter unavailable: request let through unlimited (fail open)");
        return next();
      }
      res.setHeader("RateLimit", rateLimitHeader(limiter, decision.remaining, decision.resetSeconds));
      if (decision.allowed) return next();
      const usage = required(decision.usage, "usage");
      next(
        new RateLimitedError(limiter, policy, decision.retryAfterSeconds, {
          monthly_limit: usage.monthlyLimit,
          monthly_used: usage.monthlyUsed,
          monthly_remaining: usage.monthlyRemaining,
        }),
      );
    };
  };
}
