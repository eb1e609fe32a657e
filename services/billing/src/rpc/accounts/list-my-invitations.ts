// ListMyInvitations (GET /v1/invitations): the caller's pending invitations.
import { requirePrincipal } from "@redline/service-kit";
import { listMyInvitations as list } from "../../commands/invitations.js";
import { toInvitation } from "../../mappers.js";
import type { AccountsRpc } from "../call.js";

/** Pending invitations naming the caller by id or by their verified email, newest first. */
export const listMyInvitations: AccountsRpc<"listMyInvitations"> = async (ctx, _req, call) => ({
  invitations: (await list(ctx.db, requirePrincipal(call), ctx.clock.now())).map(toInvitation),
});
