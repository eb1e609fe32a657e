// SettleOperations (interface-spec Limits): a turn's final charge; 0 releases the reservation.
import { InputError, requirePrincipal } from "@redline/service-kit";
import { settleOperations as settle } from "../../commands/quota.js";
import { toUsage } from "../../mappers.js";
import type { BillingRpc } from "../call.js";

/** Settles `charge_key` at `operations` (>= 0), idempotently; INVALID_ARGUMENT without them. */
export const settleOperations: BillingRpc<"settleOperations"> = async (ctx, req, call) => {
  if (!req.chargeKey || req.operations < 0) throw new InputError("charge_key and operations >= 0 are required");
  return {
    usage: toUsage(
      await settle(ctx.db, requirePrincipal(call), {
        chargeKey: req.chargeKey,
        ops: req.operations,
        now: ctx.clock.now(),
      }),
    ),
  };
};
