// RemoveMember (DELETE /v1/organizations/{id}/members/{user_id}).
import { requirePrincipal } from "@redline/service-kit";
import { removeMember as remove } from "../../commands/organizations.js";
import type { AccountsRpc } from "../call.js";

/** Removes the member and revokes their organization keys; 404, 403 or 409 (the last owner). */
export const removeMember: AccountsRpc<"removeMember"> = async (ctx, req, call) => {
  await remove(ctx.db, requirePrincipal(call), req.organizationId, req.userId);
  return {};
};
