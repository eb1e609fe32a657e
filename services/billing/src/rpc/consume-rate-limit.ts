// ConsumeRateLimit (issue #13): one token from the caller's per-key, per-class bucket.
import { requirePrincipal } from "@redline/service-kit";
import { consumeRateLimit as consume } from "../commands/rate-limits.js";
import { toUsage } from "../mappers.js";
import type { BillingRpc } from "./call.js";

/**
 * Takes one token (allowed) or reports the wait (refused, with the owner's usage for X-Usage-*);
 * with `debit` N > 0 records N early admissions. INVALID_ARGUMENT for an empty subject/limiter,
 * capacity/window below 1 or a bad debit; UNAUTHENTICATED without a principal on the call.
 */
export const consumeRateLimit: BillingRpc<"consumeRateLimit"> = async (ctx, req, call) => {
  const decision = await consume(ctx.db, requirePrincipal(call), {
    subject: req.subject,
    limiter: req.limiter,
    capacity: req.capacity,
    windowSeconds: req.windowSeconds,
    debit: req.debit,
  });
  return {
    allowed: decision.allowed,
    remaining: decision.remaining,
    retryAfterSeconds: decision.retryAfterSeconds,
    resetSeconds: decision.resetSeconds,
    usage: decision.usage ? toUsage(decision.usage) : undefined,
  };
};
