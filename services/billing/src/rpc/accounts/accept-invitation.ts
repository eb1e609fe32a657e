// AcceptInvitation (POST /v1/invitations/{id}/accept {share_email?}): the invitee joins.
import { requirePrincipal } from "@redline/service-kit";
import { acceptInvitation as accept } from "../../commands/invitations.js";
import { toMember, toOrganization } from "../../mappers.js";
import type { AccountsRpc } from "../call.js";

/** The organization joined and the new member; 404 not the caller's, 403 an organization key, 409 already a member. */
export const acceptInvitation: AccountsRpc<"acceptInvitation"> = async (ctx, req, call) => {
  const input = { invitationId: req.invitationId, shareEmail: req.shareEmail };
  const joined = await accept(ctx.db, requirePrincipal(call), input, ctx.clock.now());
  return { organization: toOrganization(joined.organization), member: toMember(joined.member) };
};
