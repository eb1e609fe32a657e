// BeginIdempotency (issue #13): claims an Idempotency-Key for the caller's owner.
import { edgePolicyV1 } from "@redline/grpc-stubs";
import { requirePrincipal } from "@redline/service-kit";
import { beginIdempotency as begin } from "../../commands/idempotency.js";
import type { EdgePolicyRpc } from "../call.js";

const OUTCOMES = {
  started: edgePolicyV1.IdempotencyOutcome.IDEMPOTENCY_OUTCOME_STARTED,
  replay: edgePolicyV1.IdempotencyOutcome.IDEMPOTENCY_OUTCOME_REPLAY,
  in_progress: edgePolicyV1.IdempotencyOutcome.IDEMPOTENCY_OUTCOME_IN_PROGRESS,
  mismatch: edgePolicyV1.IdempotencyOutcome.IDEMPOTENCY_OUTCOME_MISMATCH,
} as const;

/**
 * STARTED (the caller holds the key), REPLAY with the stored response, IN_PROGRESS or MISMATCH.
 * INVALID_ARGUMENT for a malformed key or hash; UNAUTHENTICATED without a principal.
 */
export const beginIdempotency: EdgePolicyRpc<"beginIdempotency"> = async (ctx, req, call) => {
  const found = await begin(ctx.db, ctx.log, requirePrincipal(call), {
    key: req.idempotencyKey,
    requestHash: req.requestHash,
    leaseSeconds: req.leaseSeconds,
  });
  return {
    outcome: OUTCOMES[found.outcome],
    response: found.outcome === "replay" ? found.reply : undefined,
  };
};
