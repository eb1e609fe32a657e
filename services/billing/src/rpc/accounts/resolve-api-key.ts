// ResolveApiKey (interface-spec Authentication): the gateway's one lookup per bearer key.
import { resolveApiKey as resolve } from "../../commands/api-keys.js";
import { toPrincipal } from "../../mappers.js";
import type { AccountsRpc } from "../call.js";

/**
 * `sk_…` → its principal with key id and read-only flag; UNAUTHENTICATED (401) when malformed,
 * unknown or revoked. Records the key's last use (at most one write a minute).
 */
export const resolveApiKey: AccountsRpc<"resolveApiKey"> = async (ctx, req) => {
  const { keyId, readOnly, ...principal } = await resolve(ctx.db, req.apiKey);
  return { principal: toPrincipal(principal, keyId, readOnly) };
};
