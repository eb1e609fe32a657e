// ReserveOperations (interface-spec Limits): a chat turn holds its operations before any write.
import { InputError, requirePrincipal } from "@redline/service-kit";
import { reserveOperations as reserve } from "../../commands/quota.js";
import { toUsage } from "../../mappers.js";
import { countReservation } from "../../reservation-metrics.js";
import type { BillingRpc } from "../call.js";

/**
 * Holds `operations` (>= 1) under `charge_key`, idempotently, until `hold_expiry_ms` (> 0) when
 * set: then billing's sweep releases it if still unsettled. INVALID_ARGUMENT without them;
 * RESOURCE_EXHAUSTED (429 with Retry-After and X-Usage-*) when a hard-stop quota is spent.
 */
export const reserveOperations: BillingRpc<"reserveOperations"> = async (ctx, req, call) => {
  if (!req.chargeKey || req.operations < 1) throw new InputError("charge_key and operations >= 1 are required");
  if ((req.holdExpiryMs ?? 0) < 0) throw new InputError("hold_expiry_ms must be >= 0");
  const usage = await countReservation(() =>
    reserve(ctx.db, requirePrincipal(call), {
      chargeKey: req.chargeKey,
      ops: req.operations,
      now: ctx.clock.now(),
      holdExpiryMs: req.holdExpiryMs,
    }),
  );
  return { usage: toUsage(usage) };
};
