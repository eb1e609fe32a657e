// RevokeOrganizationApiKey (DELETE /v1/organizations/{id}/api-keys/{key_id}): owners and admins.
import { requirePrincipal } from "@redline/service-kit";
import { revokeOrganizationApiKey as revoke } from "../../commands/organizations.js";
import type { AccountsRpc } from "../call.js";

/** Revokes it; 404 for a key not of this organization, 403 plain member. */
export const revokeOrganizationApiKey: AccountsRpc<"revokeOrganizationApiKey"> = async (ctx, req, call) => {
  await revoke(ctx.db, requirePrincipal(call), req.organizationId, req.id);
  return {};
};
