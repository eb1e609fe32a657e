// AdminListApiKeys: the operator CLI's `keys list --user`.
import { adminListApiKeys as list } from "../../commands/api-keys.js";
import { toApiKeyInfo } from "../../mappers.js";
import type { AccountsRpc } from "../call.js";

/** The user's active keys, personal and organization, newest first; NOT_FOUND unknown user. */
export const adminListApiKeys: AccountsRpc<"adminListApiKeys"> = async (ctx, req) => ({
  keys: (await list(ctx.db, req.user)).map(toApiKeyInfo),
});
