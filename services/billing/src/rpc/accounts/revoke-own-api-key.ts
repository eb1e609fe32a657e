// RevokeOwnApiKey (DELETE /v1/api-keys/{id}): one of the caller's personal keys.
import { requirePrincipal } from "@redline/service-kit";
import { revokeOwnApiKey as revoke } from "../../commands/api-keys.js";
import type { AccountsRpc } from "../call.js";

/** Revokes it; NOT_FOUND (404) for an unknown, revoked or someone else's key. */
export const revokeOwnApiKey: AccountsRpc<"revokeOwnApiKey"> = async (ctx, req, call) => {
  await revoke(ctx.db, requirePrincipal(call), req.id);
  return {};
};
