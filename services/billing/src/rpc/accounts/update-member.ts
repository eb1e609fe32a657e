// UpdateMember (PATCH /v1/organizations/{id}/members/{user_id} {role?, share_email?}).
import { requirePrincipal } from "@redline/service-kit";
import { updateMember as update } from "../../commands/organizations.js";
import { toMember } from "../../mappers.js";
import type { AccountsRpc } from "../call.js";

/** The member after the change; 404 non-member caller or target, 403 not allowed, 409 the last owner, 400 bad input. */
export const updateMember: AccountsRpc<"updateMember"> = async (ctx, req, call) => {
  const input = { organizationId: req.organizationId, userId: req.userId, role: req.role, shareEmail: req.shareEmail };
  return { member: toMember(await update(ctx.db, requirePrincipal(call), input)) };
};
