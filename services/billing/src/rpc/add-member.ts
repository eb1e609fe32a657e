// AddMember (POST /v1/organizations/{id}/members): owners and admins add an existing user.
import { requirePrincipal } from "@redline/service-kit";
import { addMember as add } from "../commands/organizations.js";
import { toMember } from "../mappers.js";
import type { BillingRpc } from "./call.js";

/** The new member; 404 non-member caller or unknown user, 403 plain member, 409 already a member, 400 bad input. */
export const addMember: BillingRpc<"addMember"> = async (ctx, req, call) => {
  const input = {
    organizationId: req.organizationId,
    userId: req.userId || undefined,
    email: req.email || undefined,
    role: req.role || undefined,
  };
  return { member: toMember(await add(ctx.db, requirePrincipal(call), input)) };
};
