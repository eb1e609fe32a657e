// AdminRemoveMember: the operator CLI's `orgs remove-member`.
import { adminRemoveMember as remove } from "../../commands/organizations.js";
import type { AccountsRpc } from "../call.js";

/** Removes the member and revokes their organization keys; NOT_FOUND unknown names or not a member, 409 the last owner. */
export const adminRemoveMember: AccountsRpc<"adminRemoveMember"> = async (ctx, req) => {
  await remove(ctx.db, { organization: req.organization, user: req.user });
  return {};
};
