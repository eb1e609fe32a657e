// POST /v1/promotions/redeem: a promotion code turns into a grant of operations for the key's
// owner, spent before the monthly bucket until it expires (interface-spec usage object).
import { defineRoute, type Route } from "../../route-registry.js";
import { usageToJson } from "../shared/mappers.js";
import { answers, endpoint } from "../shared/routes.js";
import { UsageSchema } from "../shared/schemas.js";
import * as schemas from "./schemas.js";

/**
 * POST /v1/promotions/redeem `{code}` → the usage object with the grant in `promotions`.
 * 404 unknown or expired code (Errors: like an unknown or expired link), 409 already redeemed by
 * this account or used up (no redemptions left), 422 a missing or blank code.
 */
export const redeemPromotionRoute = defineRoute({
  ...endpoint("POST /v1/promotions/redeem", "redeemPromotion", "Redeem a promotion code", "usage"),
  description:
    "Grants the promotion's operations to the key's owner (the organization for organization keys), once per " +
    "account. Grants are spent before the monthly quota, the one expiring first first. 404 for an unknown or " +
    "expired code; 409 when this account already redeemed it or all its redemptions are taken.",
  request: { body: schemas.RedeemPromotionSchema },
  ...answers(UsageSchema, "The usage after the redemption.", [404, 409, 503]),
  async handle({ body }, call) {
    const res = await call.ctx.billing.redeemPromotion({ code: body.code }, call.rpc());
    return { body: usageToJson(res.usage, call.principal?.plan ?? "") };
  },
});

/** The promotions routes (api/index.ts mounts every area's list). */
export const promotionsRoutes: Route[] = [redeemPromotionRoute];
