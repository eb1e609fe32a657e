// CreateOrganizationApiKey (POST /v1/organizations/{id}/api-keys): owners and admins.
import { requirePrincipal } from "@redline/service-kit";
import { createOrganizationApiKey as create } from "../../commands/organizations.js";
import { toCreatedApiKey } from "../../mappers.js";
import type { AccountsRpc } from "../call.js";

/** The raw key (shown once) acting for the organization; 404 non-member, 403 plain member, 400 bad name, 409 key_limit. */
export const createOrganizationApiKey: AccountsRpc<"createOrganizationApiKey"> = async (ctx, req, call) => {
  const input = { organizationId: req.organizationId, name: req.name, readOnly: req.readOnly };
  return toCreatedApiKey(await create(ctx.db, requirePrincipal(call), input, ctx.accountLimits.maxKeysPerAccount));
};
