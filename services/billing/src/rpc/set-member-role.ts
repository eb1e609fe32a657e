// SetMemberRole (PATCH /v1/organizations/{id}/members/{user_id} {role}).
import { requirePrincipal } from "@redline/service-kit";
import { setRole } from "../commands/organizations.js";
import { toMember } from "../mappers.js";
import type { BillingRpc } from "./call.js";

/** The member after the change; 404 non-member caller or target, 403 not allowed, 409 the last owner, 400 bad role. */
export const setMemberRole: BillingRpc<"setMemberRole"> = async (ctx, req, call) => {
  const input = { organizationId: req.organizationId, userId: req.userId, role: req.role };
  return { member: toMember(await setRole(ctx.db, requirePrincipal(call), input)) };
};
