// Per-source limits of callers no key vouches for (issue #30): failed key resolutions, and the
// /v1 routes that take no key (agent sign-up, takeover claim). A flood of random `sk_…` keys
// otherwise costs a billing lookup each (a Postgres read), and keyless routes reach billing
// directly. These buckets live in each gateway's memory, not in billing: their whole point is to
// refuse BEFORE billing is asked, so a shared store would be the very round trip they save. With
// R replicas a source gets at most R times the limit, which still turns thousands of lookups a
// second into a handful. The source is the client's address normalized by sourceOf (IPv6 by /64).
import { status as GrpcStatus } from "@grpc/grpc-js";
import { RedlineError } from "@redline/service-kit";
import type { RequestHandler } from "express";
import type { SourceLimitsConfig } from "./config.js";
import { clientSource } from "./source-address.js";

/** Every bucket refills its `perMinute` tokens over this window. */
const WINDOW_SECONDS = 60;
/**
 * Sources remembered per bucket set. A full bucket is the same as no entry, so full ones are
 * dropped first; past this bound the oldest entry goes (a source forgotten starts full again:
 * the bound caps memory at a few MB, and a flood needs that many distinct /64s to reach it).
 */
const MAX_SOURCES = 50_000;

interface Level {
  tokens: number;
  /** Date.now() of `tokens`. */
  at: number;
}

/** Token buckets of `perMinute` tokens per source (refill perMinute / 60 per second), in memory. */
class SourceBuckets {
  private readonly levels = new Map<string, Level>();
  private readonly perSecond: number;

  constructor(private readonly perMinute: number) {
    this.perSecond = perMinute / WINDOW_SECONDS;
  }

  private level(source: string, now: number): Level {
    const seen = this.levels.get(source);
    if (!seen) return { tokens: this.perMinute, at: now };
    return { tokens: Math.min(this.perMinute, seen.tokens + ((now - seen.at) / 1000) * this.perSecond), at: now };
  }

  private store(source: string, level: Level): void {
    this.levels.delete(source);
    if (level.tokens >= this.perMinute) return;
    if (this.levels.size >= MAX_SOURCES) {
      for (const [k, v] of this.levels) {
        if (v.tokens + ((level.at - v.at) / 1000) * this.perSecond >= this.perMinute) this.levels.delete(k);
      }
      if (this.levels.size >= MAX_SOURCES) {
        const oldest = this.levels.keys().next();
        if (!oldest.done) this.levels.delete(oldest.value);
      }
    }
    // Re-inserted last: the Map's order is then least recently used first.
    this.levels.set(source, level);
  }

  /** Takes one token of `source`: 0 when taken, else the seconds until one is back (nothing taken). */
  take(source: string, now = Date.now()): number {
    const level = this.level(source, now);
    if (level.tokens < 1) return (1 - level.tokens) / this.perSecond;
    this.store(source, { tokens: level.tokens - 1, at: now });
    return 0;
  }

  /** Gives back a token taken by take() (the attempt turned out not to count). */
  refund(source: string, now = Date.now()): void {
    const level = this.level(source, now);
    this.store(source, { tokens: Math.min(this.perMinute, level.tokens + 1), at: now });
  }
}

/** 429 of a per-source limit: `{detail, code, retry_after}` + Retry-After (seconds). */
class SourceRateLimitedError extends RedlineError {
  constructor(code: "auth_rate_limited" | "anonymous_rate_limited", detail: string, retryAfterSeconds: number) {
    const retryAfter = Math.max(1, Math.ceil(retryAfterSeconds));
    super(429, GrpcStatus.RESOURCE_EXHAUSTED, `${detail}; retry in ${retryAfter} s`, {
      body: { code, retry_after: retryAfter },
      headers: { "Retry-After": String(retryAfter) },
    });
  }
}

/**
 * What auth asks before a key billing has not vouched for (missing, malformed, or not in the
 * positive cache) is looked up: `attempt(source)` takes one of the source's failure tokens, or
 * throws 429 `auth_rate_limited` when it has none, so billing is never asked; the token is kept
 * when the attempt fails (401) and given back by the returned `succeeded()` otherwise (a valid
 * key, or billing unavailable), so the bucket counts failed resolutions only. In flight attempts
 * hold their token, so concurrency cannot get more lookups past the limit than failures.
 */
export interface AuthFailureGate {
  attempt(source: string): { succeeded(): void };
}

/** The gate of `perMinute` failed resolutions per source per minute; 0: no gate. */
export function authFailureGate(perMinute: number): AuthFailureGate {
  if (perMinute <= 0) return { attempt: () => ({ succeeded() {} }) };
  const buckets = new SourceBuckets(perMinute);
  return {
    attempt(source) {
      const wait = buckets.take(source);
      if (wait > 0) {
        throw new SourceRateLimitedError(
          "auth_rate_limited",
          `Too many requests with a missing or invalid API key from this address (${perMinute} per minute)`,
          wait,
        );
      }
      return { succeeded: () => buckets.refund(source) };
    },
  };
}

/**
 * Middleware of the /v1 routes that take no key: one token per request from the caller's source
 * bucket (`limits.anonymousPerMinute` per minute), else 429 `anonymous_rate_limited` with
 * Retry-After, before the body is read and before billing is called. 0 lets every request pass.
 */
export function anonymousLimiter(limits: SourceLimitsConfig): RequestHandler {
  const perMinute = limits.anonymousPerMinute;
  if (perMinute <= 0) return (_req, _res, next) => next();
  const buckets = new SourceBuckets(perMinute);
  return (req, _res, next) => {
    const wait = buckets.take(clientSource(req));
    if (wait === 0) return next();
    next(
      new SourceRateLimitedError(
        "anonymous_rate_limited",
        `Too many requests without an API key from this address (${perMinute} per minute)`,
        wait,
      ),
    );
  };
}
