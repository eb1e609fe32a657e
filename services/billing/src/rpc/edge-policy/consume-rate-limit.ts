// ConsumeRateLimit (issue #13, #30): one token from each of a request's buckets (its key's and its
// account's, per class), all or none.
import { requirePrincipal } from "@redline/service-kit";
import { consumeRateLimit as consume } from "../../commands/rate-limits.js";
import { toUsage } from "../../mappers.js";
import type { EdgePolicyRpc } from "../call.js";

/**
 * Takes a token from every bucket (allowed) or from none, reporting each bucket and the wait
 * (refused, with the owner's usage for X-Usage-*); with `debit` N > 0 records N early admissions
 * on each bucket. INVALID_ARGUMENT for no or too many buckets, a bucket listed twice, an empty
 * subject/limiter, capacity/window below 1 or a bad debit; UNAUTHENTICATED without a principal.
 */
export const consumeRateLimit: EdgePolicyRpc<"consumeRateLimit"> = async (ctx, req, call) => {
  const decision = await consume(ctx.db, requirePrincipal(call), {
    buckets: req.buckets.map((b) => ({
      subject: b.subject,
      limiter: b.limiter,
      capacity: b.capacity,
      windowSeconds: b.windowSeconds,
    })),
    debit: req.debit,
  });
  return {
    allowed: decision.allowed,
    retryAfterSeconds: decision.retryAfterSeconds,
    buckets: decision.buckets,
    usage: decision.usage ? toUsage(decision.usage) : undefined,
  };
};
