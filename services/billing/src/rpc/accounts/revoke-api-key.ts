// RevokeApiKey: the admin CLI's `keys revoke`; a revoked key is refused from then on.
import { revokeApiKey as revoke } from "../../commands/api-keys.js";
import type { AccountsRpc } from "../call.js";

/** `revoked` is false when the key was unknown or already revoked. */
export const revokeApiKey: AccountsRpc<"revokeApiKey"> = async (ctx, req) => ({
  revoked: await revoke(ctx.db, req.apiKey),
});
