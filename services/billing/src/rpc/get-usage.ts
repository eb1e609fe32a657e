// GetUsage (interface-spec Limits, GET /v1/usage): the caller's usage in the current month.
import { requirePrincipal } from "@redline/service-kit";
import { getUsage as read } from "../commands/quota.js";
import { toUsage } from "../mappers.js";
import type { BillingRpc } from "./call.js";

/** The owner's usage, nothing charged; UNAUTHENTICATED without a principal on the call. */
export const getUsage: BillingRpc<"getUsage"> = async (ctx, _req, call) => ({
  usage: toUsage(await read(ctx.db, requirePrincipal(call))),
});
