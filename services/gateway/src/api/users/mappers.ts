// billing.v1.UserAccount → the UserAccount JSON.
import type { billingV1 } from "@redline/grpc-stubs";
import type { UserAccountJson } from "./schemas.js";

/** The account as JSON: organization_id and email left out when empty. */
export function userAccountToJson(account: billingV1.UserAccount): UserAccountJson {
  return {
    user_id: account.userId,
    ...(account.organizationId && { organization_id: account.organizationId }),
    ...(account.email && { email: account.email }),
  };
}
