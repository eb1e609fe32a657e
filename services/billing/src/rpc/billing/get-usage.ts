// GetUsage (interface-spec usage object and Limits; GET /v1/usage): the caller's usage in the
// account's current billing period, its live promotion grants and its latest charges. Free.
import { requirePrincipal } from "@redline/service-kit";
import { getUsage as read } from "../../commands/quota.js";
import { recentCharges } from "../../db/store/usage.js";
import { toUsage } from "../../mappers.js";
import type { BillingRpc } from "../call.js";

/**
 * The owner's usage (nothing charged) and its last 20 charges holding or billing operations,
 * newest first; UNAUTHENTICATED without a principal on the call.
 */
export const getUsage: BillingRpc<"getUsage"> = async (ctx, _req, call) => {
  const principal = requirePrincipal(call);
  const [usage, charges] = await Promise.all([
    read(ctx.db, principal, ctx.clock.now()),
    recentCharges(ctx.db, principal.ownerId, 20),
  ]);
  return {
    usage: toUsage(usage),
    charges: charges.map((c) => ({ ops: c.ops, state: c.state, bucketUsed: c.bucket_used, createdAt: c.created_at })),
  };
};
