// POST /v1/promotions/redeem: not shown by interface-spec.md beyond the usage object's
// `promotions`, so ours to design; the answer is the usage object with the new grant.
import { z } from "zod";
import { component } from "../shared/schemas.js";

/** Codes are short (ours are 14 characters); the bound refuses junk before billing sees it. */
export const MAX_PROMOTION_CODE_CHARS = 64;

/** POST /v1/promotions/redeem body. */
export const RedeemPromotionSchema = component("RedeemPromotionRequest", {
  code: z
    .string()
    .trim()
    .min(1)
    .max(MAX_PROMOTION_CODE_CHARS)
    .meta({ description: "The promotion code, e.g. K7QM-2XPA-9HTR; compared case-insensitively." }),
});
