// AdminRevokeApiKeyById: the operator CLI's `keys revoke <id>`.
import { adminRevokeApiKey as revoke } from "../commands/api-keys.js";
import type { BillingRpc } from "./call.js";

/** Revokes the key; NOT_FOUND when unknown or already revoked. */
export const adminRevokeApiKeyById: BillingRpc<"adminRevokeApiKeyById"> = async (ctx, req) => {
  await revoke(ctx.db, req.id);
  return {};
};
