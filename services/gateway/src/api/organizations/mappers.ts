// accounts.v1 organization messages → the Organization and OrganizationMember JSON.
import type { accountsV1 } from "@redline/grpc-stubs";
import { required } from "@redline/service-kit";
import { iso } from "../shared/mappers.js";
import type { InvitationJson, MemberJson, OrganizationJson } from "./schemas.js";

const ROLES = ["owner", "admin", "member"] as const;

const INVITATION_STATUSES = ["pending", "accepted", "declined", "revoked", "expired"] as const;

function roleOf(role: string): OrganizationJson["role"] {
  const found = ROLES.find((r) => r === role);
  if (!found) throw new Error(`contract: unknown role '${role}'`);
  return found;
}

/** An organization with the caller's role. */
export function organizationToJson(org: accountsV1.Organization): OrganizationJson {
  return {
    id: org.id,
    name: org.name,
    plan: org.plan,
    role: roleOf(org.role),
    created_at: required(iso(org.createdAt), "created_at"),
  };
}

/** A member; email left out when none is on file. */
export function memberToJson(member: accountsV1.OrganizationMember): MemberJson {
  return {
    user_id: member.userId,
    name: member.name,
    ...(member.email && { email: member.email }),
    role: roleOf(member.role),
  };
}

/** An invitation; the invitee as invited (email or user_id), the other left out. */
export function invitationToJson(inv: accountsV1.Invitation): InvitationJson {
  const status = INVITATION_STATUSES.find((st) => st === inv.status);
  if (!status) throw new Error(`contract: unknown invitation status '${inv.status}'`);
  return {
    id: inv.id,
    organization_id: inv.organizationId,
    organization_name: inv.organizationName,
    ...(inv.email && { email: inv.email }),
    ...(inv.userId && { user_id: inv.userId }),
    role: roleOf(inv.role),
    status,
    invited_by: inv.invitedByName,
    created_at: required(iso(inv.createdAt), "created_at"),
    expires_at: required(iso(inv.expiresAt), "expires_at"),
  };
}
