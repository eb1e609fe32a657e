// GetOrganization (GET /v1/organizations/{id}).
import { requirePrincipal } from "@redline/service-kit";
import { getOrganization as get } from "../../commands/organizations.js";
import { toOrganization } from "../../mappers.js";
import type { AccountsRpc } from "../call.js";

/** One of the caller's organizations; NOT_FOUND (404) when the caller is not a member. */
export const getOrganization: AccountsRpc<"getOrganization"> = async (ctx, req, call) => ({
  organization: toOrganization(await get(ctx.db, requirePrincipal(call), req.organizationId)),
});
