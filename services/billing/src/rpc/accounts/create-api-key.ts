// CreateApiKey: the admin CLI's `keys create` (accounts created on demand, plan set on the owner).
import { createApiKey as create } from "../../commands/api-keys.js";
import { toApiKeyInfo, toPrincipal } from "../../mappers.js";
import type { AccountsRpc } from "../call.js";

/**
 * A new raw key (shown once), its principal and its listing; INVALID_ARGUMENT for a bad user,
 * plan or name (over 100 characters).
 */
export const createApiKey: AccountsRpc<"createApiKey"> = async (ctx, req) => {
  const input = {
    user: req.user,
    organization: req.organization || undefined,
    plan: req.plan || undefined,
    name: req.name,
    readOnly: req.readOnly,
  };
  const { apiKey, principal, key } = await create(ctx.db, input);
  return { apiKey, principal: toPrincipal(principal, key.id, key.read_only), key: toApiKeyInfo(key) };
};
