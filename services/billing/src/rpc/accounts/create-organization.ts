// CreateOrganization (POST /v1/organizations): the caller's user becomes its owner and creator.
import { requirePrincipal } from "@redline/service-kit";
import { createOrganization as create } from "../../commands/organizations.js";
import { toOrganization } from "../../mappers.js";
import type { AccountsRpc } from "../call.js";

/** The new organization on the configured plan; INVALID_ARGUMENT (400) bad name, 409 name taken or organization_limit. */
export const createOrganization: AccountsRpc<"createOrganization"> = async (ctx, req, call) => ({
  organization: toOrganization(await create(ctx.db, requirePrincipal(call), req.name, ctx.accountLimits)),
});
