// ListOrganizationApiKeys (GET /v1/organizations/{id}/api-keys): owners and admins.
import { requirePrincipal } from "@redline/service-kit";
import { listOrganizationApiKeys as list } from "../../commands/organizations.js";
import { toApiKeyInfo } from "../../mappers.js";
import type { AccountsRpc } from "../call.js";

/** The organization's active keys, newest first; 404 non-member, 403 plain member. */
export const listOrganizationApiKeys: AccountsRpc<"listOrganizationApiKeys"> = async (ctx, req, call) => ({
  keys: (await list(ctx.db, requirePrincipal(call), req.organizationId)).map(toApiKeyInfo),
});
