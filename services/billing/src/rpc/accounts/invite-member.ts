// InviteMember (POST /v1/organizations/{id}/members {user_id | email, role?}): owners and admins.
import { requirePrincipal } from "@redline/service-kit";
import { inviteMember as invite } from "../../commands/invitations.js";
import { toInvitation } from "../../mappers.js";
import type { AccountsRpc } from "../call.js";

/** The pending invitation, whether or not the invitee exists; 404 non-member, 403 plain member, 400 bad input, 409. */
export const inviteMember: AccountsRpc<"inviteMember"> = async (ctx, req, call) => {
  const input = {
    organizationId: req.organizationId,
    userId: req.userId || undefined,
    email: req.email || undefined,
    role: req.role || undefined,
  };
  return { invitation: toInvitation(await invite(ctx.db, requirePrincipal(call), input, ctx.clock.now())) };
};
