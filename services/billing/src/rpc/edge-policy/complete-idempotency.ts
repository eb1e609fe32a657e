// CompleteIdempotency (issue #13): stores the response of a claimed key, or releases it.
import { requirePrincipal } from "@redline/service-kit";
import { completeIdempotency as complete } from "../../commands/idempotency.js";
import type { EdgePolicyRpc } from "../call.js";

/**
 * With `response`: keeps it for replay (24 h from the claim). Without: releases the claim so a
 * retry runs again. `stored` false when the claim was no longer held. INVALID_ARGUMENT for a
 * malformed key, hash or status.
 */
export const completeIdempotency: EdgePolicyRpc<"completeIdempotency"> = async (ctx, req, call) => ({
  stored: await complete(ctx.db, requirePrincipal(call), {
    key: req.idempotencyKey,
    requestHash: req.requestHash,
    reply: req.response,
  }),
});
