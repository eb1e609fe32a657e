// CreatePromotion (admin CLI `admin promotions create`): a code users redeem for operations.
import { InputError } from "@redline/service-kit";
import { createPromotion as create } from "../../commands/promotions.js";
import type { BillingRpc } from "../call.js";

/** The new code; INVALID_ARGUMENT for a blank name, ops < 1, a missing or past expires_at. */
export const createPromotion: BillingRpc<"createPromotion"> = async (ctx, req) => {
  if (!req.expiresAt) throw new InputError("expires_at is required");
  const code = await create(
    ctx.db,
    { name: req.name, ops: req.ops, expiresAt: req.expiresAt, maxRedemptions: req.maxRedemptions || null },
    ctx.clock.now(),
  );
  return { code };
};
