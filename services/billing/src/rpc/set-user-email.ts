// SetUserEmail (PATCH /v1/users/me {email}): the caller's email on file, for email exports.
import { requirePrincipal } from "@redline/service-kit";
import { setUserEmail as set } from "../commands/accounts.js";
import type { BillingRpc } from "./call.js";

/** Sets ("" clears) the caller's email; INVALID_ARGUMENT (400) for a malformed address, NOT_FOUND for a removed user. */
export const setUserEmail: BillingRpc<"setUserEmail"> = async (ctx, req, call) => ({
  account: await set(ctx.db, requirePrincipal(call), req.email),
});
