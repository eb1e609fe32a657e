// CreateHandoff: ingest's StartAgentHandoff opens the link here, then mails the code.
import { requirePrincipal } from "@redline/service-kit";
import { createHandoff as create } from "../../commands/handoffs.js";
import type { AccountsRpc } from "../call.js";

/**
 * A takeover link of the caller's agent account: id, the code in clear (only for the mail), expiry
 * and normalised address. INVALID_ARGUMENT (400) malformed email; 409 not an agent account.
 */
export const createHandoff: AccountsRpc<"createHandoff"> = (ctx, req, call) =>
  create(ctx.db, requirePrincipal(call), req.email, ctx.clock.now());
