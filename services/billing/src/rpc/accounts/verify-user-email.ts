// VerifyUserEmail (POST /v1/users/me/email/verify {code}).
import { requirePrincipal } from "@redline/service-kit";
import { verifyUserEmail as verify } from "../../commands/accounts.js";
import { toUserAccount } from "../../mappers.js";
import type { AccountsRpc } from "../call.js";

/** The account with email_verified_at; 403 wrong code (attempts left), 410 disabled, 404 none pending. */
export const verifyUserEmail: AccountsRpc<"verifyUserEmail"> = async (ctx, req, call) => ({
  account: toUserAccount(await verify(ctx.db, requirePrincipal(call), req.code, ctx.clock.now())),
});
