// DeclineInvitation (POST /v1/invitations/{id}/decline).
import { requirePrincipal } from "@redline/service-kit";
import { declineInvitation as decline } from "../../commands/invitations.js";
import { toInvitation } from "../../mappers.js";
import type { AccountsRpc } from "../call.js";

/** The invitation, now declined; 404 when not the caller's pending invitation. */
export const declineInvitation: AccountsRpc<"declineInvitation"> = async (ctx, req, call) => ({
  invitation: toInvitation(await decline(ctx.db, requirePrincipal(call), req.invitationId, ctx.clock.now())),
});
