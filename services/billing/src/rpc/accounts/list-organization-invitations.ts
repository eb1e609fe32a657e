// ListOrganizationInvitations (GET /v1/organizations/{id}/invitations): owners and admins.
import { requirePrincipal } from "@redline/service-kit";
import { listOrganizationInvitations as list } from "../../commands/invitations.js";
import { toInvitation } from "../../mappers.js";
import type { AccountsRpc } from "../call.js";

/** The organization's invitations of the last 30 days, pending first; 404 non-member, 403 plain member. */
export const listOrganizationInvitations: AccountsRpc<"listOrganizationInvitations"> = async (ctx, req, call) => ({
  invitations: (await list(ctx.db, requirePrincipal(call), req.organizationId, ctx.clock.now())).map(toInvitation),
});
