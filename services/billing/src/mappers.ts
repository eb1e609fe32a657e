// Command results → accounts.v1 and billing.v1 messages.
import type { accountsV1, billingV1 } from "@redline/grpc-stubs";
import { InputError, isUuid, type Principal } from "@redline/service-kit";
import type { UserAccountView } from "./commands/accounts.js";
import type { IssuedKey } from "./commands/api-keys.js";
import type { InvitationResult } from "./commands/invitations.js";
import type { MemberView, OrganizationOfUser } from "./commands/organizations.js";
import type { AccountRef } from "./commands/plans.js";
import type { UsageView } from "./commands/quota.js";
import type { ApiKeyRow } from "./db/tables.js";

/** The proto Usage of a usage view (same fields; period_end as a Date). */
export function toUsage(usage: UsageView): billingV1.Usage {
  return { ...usage };
}

/** The proto Principal; `keyId` is empty where no stored key is at hand. */
export function toPrincipal(principal: Principal, keyId = "", readOnly = false): accountsV1.Principal {
  return { ...principal, userName: principal.userName ?? "", keyId, readOnly };
}

/** A stored key as listings show it: never the key or its hash; last_used_at absent when never used. */
export function toApiKeyInfo(row: ApiKeyRow): accountsV1.ApiKeyInfo {
  return {
    id: row.id,
    name: row.name ?? "",
    prefix: row.key_prefix,
    readOnly: row.read_only,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at ?? undefined,
    organizationId: row.organization_id ?? "",
    userId: row.user_id,
  };
}

/** A new key: the raw key (shown once) and its listing. */
export function toCreatedApiKey(issued: IssuedKey): accountsV1.CreatedApiKey {
  return { apiKey: issued.apiKey, key: toApiKeyInfo(issued.row) };
}

/** An organization with the caller's role. */
export function toOrganization(org: OrganizationOfUser): accountsV1.Organization {
  return { id: org.id, name: org.name, plan: org.plan, role: org.role, createdAt: org.created_at };
}

/** A member; email "" unless verified and shared by the member. */
export function toMember(member: MemberView): accountsV1.OrganizationMember {
  return { userId: member.user_id, name: member.name, email: member.email ?? "", role: member.role };
}

/** An operator's account reference → the store lookup: id, else user name, else organization name. */
export function toAccountRef(ref: billingV1.AccountRef | undefined): AccountRef {
  if (ref?.accountId) {
    if (!isUuid(ref.accountId)) throw new InputError("account_id must be a uuid");
    return { id: ref.accountId };
  }
  if (ref?.user) return { kind: "user", name: ref.user };
  if (ref?.organization) return { kind: "organization", name: ref.organization };
  throw new InputError("account is required: account_id, user or organization");
}

/** The caller's user account; email_verified_at absent while unverified. */
export function toUserAccount(account: UserAccountView): accountsV1.UserAccount {
  return { ...account };
}

/** An invitation with its shown status (pending past its expiry reads expired). */
export function toInvitation(row: InvitationResult): accountsV1.Invitation {
  return {
    id: row.id,
    organizationId: row.organization_id,
    organizationName: row.organization_name,
    email: row.email ?? "",
    userId: row.user_id ?? "",
    role: row.role,
    status: row.shownStatus,
    invitedByName: row.invited_by_name,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}
