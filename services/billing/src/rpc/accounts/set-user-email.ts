// SetUserEmail (ingest's UpdateUserEmail for PATCH /v1/users/me {email}): the email on file,
// unverified, and the code ingest mails to prove it.
import { requirePrincipal } from "@redline/service-kit";
import { setUserEmail as set } from "../../commands/accounts.js";
import { toUserAccount } from "../../mappers.js";
import type { AccountsRpc } from "../call.js";

/** The account and the code to mail; 400 malformed, 403 an agent's key, 429 verification_limit, 404 removed user. */
export const setUserEmail: AccountsRpc<"setUserEmail"> = async (ctx, req, call) => {
  const { account, verification } = await set(ctx.db, requirePrincipal(call), req.email, ctx.clock.now());
  return { account: toUserAccount(account), verification };
};
