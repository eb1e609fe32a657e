// AdminRevokeApiKeyById: the operator CLI's `keys revoke <id>`.
import { adminRevokeApiKey as revoke } from "../../commands/api-keys.js";
import type { AccountsRpc } from "../call.js";

/** Revokes the key; NOT_FOUND when unknown or already revoked. */
export const adminRevokeApiKeyById: AccountsRpc<"adminRevokeApiKeyById"> = async (ctx, req) => {
  await revoke(ctx.db, req.id);
  return {};
};
