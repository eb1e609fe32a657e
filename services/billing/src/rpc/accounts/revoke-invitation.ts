// RevokeInvitation (DELETE /v1/organizations/{id}/invitations/{invitation_id}): owners and admins.
import { requirePrincipal } from "@redline/service-kit";
import { revokeInvitation as revoke } from "../../commands/invitations.js";
import { toInvitation } from "../../mappers.js";
import type { AccountsRpc } from "../call.js";

/** The invitation, now revoked; 404 unknown or no longer pending, 403 plain member. */
export const revokeInvitation: AccountsRpc<"revokeInvitation"> = async (ctx, req, call) => ({
  invitation: toInvitation(
    await revoke(ctx.db, requirePrincipal(call), req.organizationId, req.invitationId, ctx.clock.now()),
  ),
});
