// GetUserAccount (GET /v1/users/me): the caller's user account and email on file.
import { requirePrincipal } from "@redline/service-kit";
import { getUserAccount as read } from "../../commands/accounts.js";
import { toUserAccount } from "../../mappers.js";
import type { AccountsRpc } from "../call.js";

/** The caller's user account (email "" when none); UNAUTHENTICATED without a principal, NOT_FOUND for a removed user. */
export const getUserAccount: AccountsRpc<"getUserAccount"> = async (ctx, _req, call) => ({
  account: toUserAccount(await read(ctx.db, requirePrincipal(call))),
});
