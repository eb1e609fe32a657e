// ListOrganizations (GET /v1/organizations): the caller's organizations with their role.
import { requirePrincipal } from "@redline/service-kit";
import { listOrganizations as list } from "../../commands/organizations.js";
import { toOrganization } from "../../mappers.js";
import type { AccountsRpc } from "../call.js";

/** By name; an organization key sees only its own organization. */
export const listOrganizations: AccountsRpc<"listOrganizations"> = async (ctx, _req, call) => ({
  organizations: (await list(ctx.db, requirePrincipal(call))).map(toOrganization),
});
