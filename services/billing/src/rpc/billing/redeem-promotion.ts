// RedeemPromotion (POST /v1/promotions/redeem): a grant of operations for the caller's owner.
import { requirePrincipal } from "@redline/service-kit";
import { redeemPromotion as redeem } from "../../commands/promotions.js";
import { toUsage } from "../../mappers.js";
import type { BillingRpc } from "../call.js";

/**
 * The usage with the new grant in `promotions`. INVALID_ARGUMENT blank code; NOT_FOUND (404)
 * unknown or expired; FAILED_PRECONDITION (409) already redeemed by this account or used up.
 */
export const redeemPromotion: BillingRpc<"redeemPromotion"> = async (ctx, req, call) => ({
  usage: toUsage(await redeem(ctx.db, requirePrincipal(call), req.code, ctx.clock.now())),
});
