// ListMembers (GET /v1/organizations/{id}/members).
import { requirePrincipal } from "@redline/service-kit";
import { listMembers as list } from "../../commands/organizations.js";
import { toMember } from "../../mappers.js";
import type { AccountsRpc } from "../call.js";

/** Owners, admins, then members; NOT_FOUND (404) when the caller is not a member. */
export const listMembers: AccountsRpc<"listMembers"> = async (ctx, req, call) => ({
  members: (await list(ctx.db, requirePrincipal(call), req.organizationId)).map(toMember),
});
