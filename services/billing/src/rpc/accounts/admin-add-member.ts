// AdminAddMember: the operator CLI's `orgs add-member` (no caller; names or ids).
import { adminAddMember as add } from "../../commands/organizations.js";
import { toMember } from "../../mappers.js";
import type { AccountsRpc } from "../call.js";

/** The member after the change; INVALID_ARGUMENT for a bad role, 409 demoting the last owner. */
export const adminAddMember: AccountsRpc<"adminAddMember"> = async (ctx, req) => ({
  member: toMember(await add(ctx.db, { organization: req.organization, user: req.user, role: req.role || undefined })),
});
