// ListOwnApiKeys (GET /v1/api-keys): the caller's user's active personal keys.
import { requirePrincipal } from "@redline/service-kit";
import { listOwnApiKeys as list } from "../../commands/api-keys.js";
import { toApiKeyInfo } from "../../mappers.js";
import type { AccountsRpc } from "../call.js";

/** Active personal keys, newest first, without the keys themselves. */
export const listOwnApiKeys: AccountsRpc<"listOwnApiKeys"> = async (ctx, _req, call) => ({
  keys: (await list(ctx.db, requirePrincipal(call))).map(toApiKeyInfo),
});
