// accounts.v1.UserAccount → the UserAccount JSON.
import type { accountsV1 } from "@redline/grpc-stubs";
import { iso } from "../shared/mappers.js";
import type { UserAccountJson } from "./schemas.js";

/** The account as JSON: organization_id, email and email_verified_at left out when empty. */
export function userAccountToJson(account: accountsV1.UserAccount): UserAccountJson {
  const verifiedAt = iso(account.emailVerifiedAt);
  return {
    user_id: account.userId,
    ...(account.organizationId && { organization_id: account.organizationId }),
    ...(account.email && { email: account.email }),
    ...(verifiedAt && { email_verified_at: verifiedAt }),
  };
}
