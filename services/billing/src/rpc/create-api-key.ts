// CreateApiKey: the admin CLI's `keys create` (accounts created on demand, plan set on the owner).
import { createApiKey as create } from "../commands/api-keys.js";
import { toPrincipal } from "../mappers.js";
import type { BillingRpc } from "./call.js";

/** A new raw key (shown once) and its principal without key id; INVALID_ARGUMENT for a bad user or plan. */
export const createApiKey: BillingRpc<"createApiKey"> = async (ctx, req) => {
  const input = { user: req.user, organization: req.organization || undefined, plan: req.plan || undefined };
  const { apiKey, principal } = await create(ctx.db, input);
  return { apiKey, principal: toPrincipal(principal) };
};
