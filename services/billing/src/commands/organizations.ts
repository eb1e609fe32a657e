// Organizations (interface-spec Authentication rule 6, "not shown": ours to design). Members
// have a role: owners and admins invite and remove members and manage the organization's keys;
// every member may read the organization and its member list and use the keys they are given.
// Only owners make owners, and an organization always keeps one. A caller who is not a member
// gets 404, never 403, so an organization's existence does not leak; a key that acts for another
// organization sees only that one. People join only by accepting an invitation
// (commands/invitations.ts); a member's email shows only when verified and shared by them.
import { randomUUID } from "node:crypto";
import {
  ConflictError,
  ForbiddenError,
  InputError,
  isUuid,
  type Knex,
  NotFoundError,
  type Principal,
} from "@redline/service-kit";
import {
  addMembership,
  countOrganizationsCreatedBy,
  countOwners,
  deleteMembership,
  findAccount,
  findAccountByName,
  findMembership,
  insertAccount,
  lockAccountById,
  lockMemberships,
  type MemberView,
  membersOf,
  type OrganizationOfUser,
  organizationsOfUser,
  setMemberRole,
  setShareEmail,
  upsertAccount,
} from "../db/store/accounts.js";
import { listKeys, revokeMemberKeys } from "../db/store/api-keys.js";
import type { AccountRow, ApiKeyRow, MemberRole } from "../db/tables.js";
import type { AccountLimits } from "./account-limits.js";
import {
  callerKey,
  findUserByNameOrId,
  type IssuedKey,
  issueCappedKey,
  keyName,
  revokeKeyForCaller,
} from "./api-keys.js";

/** Longest organization name (characters). */
export const MAX_ORG_NAME_CHARS = 100;
const ROLES: readonly MemberRole[] = ["owner", "admin", "member"];

export type { MemberView, OrganizationOfUser };

/** The role named by `role`, `fallback` when empty; InputError (400) for anything else. */
export function roleOf(role: string | undefined, fallback: MemberRole): MemberRole {
  if (!role) return fallback;
  if (!(ROLES as readonly string[]).includes(role)) throw new InputError("role must be owner, admin or member");
  return role as MemberRole;
}

/** The caller's membership of `organizationId`; NotFoundError (404) when there is none to see. */
export async function membershipOf(db: Knex | Knex.Transaction, principal: Principal, organizationId: string) {
  const hidden = () => new NotFoundError("Organization not found");
  if (!isUuid(organizationId)) throw hidden();
  if (principal.organizationId && principal.organizationId !== organizationId) throw hidden();
  const membership = await findMembership(db, principal.userId, organizationId);
  if (!membership) throw hidden();
  return membership;
}

/** The caller's membership when they are an owner or admin; else ForbiddenError (403) naming the action. */
export async function adminOf(
  db: Knex | Knex.Transaction,
  principal: Principal,
  organizationId: string,
  action: string,
) {
  const membership = await membershipOf(db, principal, organizationId);
  if (membership.role === "member") throw new ForbiddenError(`Only the organization's owners and admins can ${action}`);
  return membership;
}

/**
 * POST /v1/organizations: a new organization on `limits.newOrganizationPlan` (default none: no
 * operations until an operator grants a plan), the caller's user its owner and creator.
 * InputError (400) for an empty name or one over 100 characters; ConflictError (409) when the
 * name is taken (name_taken) or the user already created limits.maxOrganizationsPerUser
 * (organization_limit); 401 for a key revoked meanwhile.
 */
export async function createOrganization(
  db: Knex,
  principal: Principal,
  name: string,
  limits: Pick<AccountLimits, "maxOrganizationsPerUser" | "newOrganizationPlan">,
): Promise<OrganizationOfUser> {
  const trimmed = name.trim();
  if (!trimmed || trimmed.length > MAX_ORG_NAME_CHARS)
    throw new InputError(`name must be 1 to ${MAX_ORG_NAME_CHARS} characters`);
  return db.transaction(async (trx) => {
    await callerKey(trx, principal);
    // Locked: concurrent creations by one user count one at a time.
    if (!(await lockAccountById(trx, principal.userId))) throw new NotFoundError("Account not found");
    if ((await countOrganizationsCreatedBy(trx, principal.userId)) >= limits.maxOrganizationsPerUser)
      throw new ConflictError(
        `You have created ${limits.maxOrganizationsPerUser} organizations, the most allowed; ask the operator for more`,
        { code: "organization_limit" },
      );
    const id = randomUUID();
    const inserted = await insertAccount(trx, {
      id,
      kind: "organization",
      name: trimmed,
      plan: limits.newOrganizationPlan,
      is_agent: false,
      created_by: principal.userId,
    });
    if (!inserted) throw new ConflictError(`An organization named '${trimmed}' already exists`, { code: "name_taken" });
    await addMembership(trx, principal.userId, id, "owner");
    const [org] = await organizationsOfUser(trx, principal.userId, id);
    return org;
  });
}

/** GET /v1/organizations: the caller's user's organizations (only the key's one for an organization key). */
export function listOrganizations(db: Knex, principal: Principal): Promise<OrganizationOfUser[]> {
  return organizationsOfUser(db, principal.userId, principal.organizationId || undefined);
}

/** GET /v1/organizations/{id}: one of the caller's organizations with their role; 404 otherwise. */
export async function getOrganization(
  db: Knex,
  principal: Principal,
  organizationId: string,
): Promise<OrganizationOfUser> {
  await membershipOf(db, principal, organizationId);
  const [org] = await organizationsOfUser(db, principal.userId, organizationId);
  return org;
}

/** GET /v1/organizations/{id}/members: any member may list; 404 for non-members. */
export async function listMembers(db: Knex, principal: Principal, organizationId: string): Promise<MemberView[]> {
  await membershipOf(db, principal, organizationId);
  return membersOf(db, organizationId);
}

/**
 * PATCH /v1/organizations/{id}/members/{user_id} `{role?, share_email?}`: owners and admins
 * change a member's role (only owners make an owner or change one); a member changes only their
 * own share_email. 404 non-member caller or target, 403 not allowed, 409 demoting the last owner,
 * 400 bad role or neither field.
 */
export async function updateMember(
  db: Knex,
  principal: Principal,
  input: { organizationId: string; userId: string; role?: string; shareEmail?: boolean },
): Promise<MemberView> {
  if (input.role === undefined && input.shareEmail === undefined)
    throw new InputError("send role, share_email or both");
  return db.transaction(async (trx) => {
    if (input.shareEmail !== undefined) {
      await membershipOf(trx, principal, input.organizationId);
      if (input.userId !== principal.userId)
        throw new ForbiddenError("Only the member themself chooses whether their email is shared");
      await setShareEmail(trx, input.userId, input.organizationId, input.shareEmail);
    }
    if (input.role !== undefined) await setRoleLocked(trx, principal, { ...input, role: input.role });
    const [member] = await membersOf(trx, input.organizationId, input.userId);
    if (!member) throw new NotFoundError("Member not found");
    return member;
  });
}

/** The role change of updateMember, inside its transaction. */
async function setRoleLocked(
  trx: Knex.Transaction,
  principal: Principal,
  input: { organizationId: string; userId: string; role: string },
): Promise<void> {
  const role = roleOf(input.role, "member");
  const caller = await adminOf(trx, principal, input.organizationId, "change roles");
  await lockMemberships(trx, input.organizationId);
  const target = isUuid(input.userId) ? await findMembership(trx, input.userId, input.organizationId) : undefined;
  if (!target) throw new NotFoundError("Member not found");
  if ((role === "owner" || target.role === "owner") && caller.role !== "owner")
    throw new ForbiddenError("Only owners can make or change owners");
  if (target.role === "owner" && role !== "owner" && (await countOwners(trx, input.organizationId)) <= 1)
    throw new ConflictError("An organization keeps at least one owner: add another owner first", {
      code: "last_owner",
    });
  await setMemberRole(trx, input.userId, input.organizationId, role);
}

/** Ends a membership under the organization's lock; the last owner stays (409). Revokes the member's keys. */
async function removeLocked(trx: Knex.Transaction, organizationId: string, userId: string): Promise<void> {
  const target = await findMembership(trx, userId, organizationId);
  if (!target) throw new NotFoundError("Member not found");
  if (target.role === "owner" && (await countOwners(trx, organizationId)) <= 1)
    throw new ConflictError("An organization keeps at least one owner: add another owner first", {
      code: "last_owner",
    });
  await deleteMembership(trx, userId, organizationId);
  // A removed member must lose access at once, not when someone remembers their keys.
  await revokeMemberKeys(trx, userId, organizationId);
}

/**
 * DELETE /v1/organizations/{id}/members/{user_id}: owners and admins remove members (only owners
 * remove owners); any member may remove themself. The member's keys for the organization are
 * revoked. 404 non-member caller or target, 403 not allowed, 409 the last owner.
 */
export async function removeMember(
  db: Knex,
  principal: Principal,
  organizationId: string,
  userId: string,
): Promise<void> {
  await db.transaction(async (trx) => {
    const caller = await membershipOf(trx, principal, organizationId);
    await lockMemberships(trx, organizationId);
    if (userId !== principal.userId) {
      if (caller.role === "member")
        throw new ForbiddenError("Only the organization's owners and admins can remove members");
      const target = isUuid(userId) ? await findMembership(trx, userId, organizationId) : undefined;
      if (!target) throw new NotFoundError("Member not found");
      if (target.role === "owner" && caller.role !== "owner") throw new ForbiddenError("Only owners can remove owners");
    }
    await removeLocked(trx, organizationId, userId);
  });
}

/**
 * POST /v1/organizations/{id}/api-keys: a key acting for the organization (billing its plan),
 * held by the calling admin's user (an agent's key when the caller's account is an agent's).
 * 404 non-member, 403 plain member, 400 name too long, 409 key_limit at `cap` live keys of the
 * organization, 401 for a key revoked meanwhile.
 */
export async function createOrganizationApiKey(
  db: Knex,
  principal: Principal,
  input: { organizationId: string; name?: string; readOnly?: boolean },
  cap: number,
): Promise<IssuedKey> {
  const name = keyName(input.name);
  return db.transaction(async (trx) => {
    await callerKey(trx, principal);
    await adminOf(trx, principal, input.organizationId, "manage its API keys");
    const account = await findAccount(trx, principal.userId);
    return issueCappedKey(
      trx,
      {
        userId: principal.userId,
        organizationId: input.organizationId,
        name,
        readOnly: input.readOnly,
        agent: account?.is_agent ?? false,
      },
      cap,
    );
  });
}

/** GET /v1/organizations/{id}/api-keys: the organization's active keys (owners and admins). */
export async function listOrganizationApiKeys(
  db: Knex,
  principal: Principal,
  organizationId: string,
): Promise<ApiKeyRow[]> {
  await adminOf(db, principal, organizationId, "manage its API keys");
  return listKeys(db, { organizationId });
}

/**
 * DELETE /v1/organizations/{id}/api-keys/{key_id} (owners and admins); 404 for a key of anyone
 * else, 403 (agent_key) when an agent's key aims at a key a human holds.
 */
export async function revokeOrganizationApiKey(
  db: Knex,
  principal: Principal,
  organizationId: string,
  id: string,
): Promise<void> {
  await adminOf(db, principal, organizationId, "manage its API keys");
  await revokeKeyForCaller(db, principal, id, { organizationId });
}

/**
 * Operator CLI `orgs add-member`: the user (name or id; created when a name is unknown) joins
 * the organization (name or id; created when a name is unknown) with `role` (default member),
 * or takes that role when already a member. InputError for a bad role or empty names.
 */
export async function adminAddMember(
  db: Knex,
  input: { organization: string; user: string; role?: string },
): Promise<MemberView> {
  const role = roleOf(input.role, "member");
  if (!input.organization || !input.user) throw new InputError("an organization and a user are required");
  return db.transaction(async (trx) => {
    const org = await accountByNameOrId(trx, "organization", input.organization, true);
    const user = await accountByNameOrId(trx, "user", input.user, true);
    if (!(await addMembership(trx, user.id, org.id, role))) {
      await lockMemberships(trx, org.id);
      const current = await findMembership(trx, user.id, org.id);
      if (current?.role === "owner" && role !== "owner" && (await countOwners(trx, org.id)) <= 1)
        throw new ConflictError("An organization keeps at least one owner: add another owner first");
      await setMemberRole(trx, user.id, org.id, role);
    }
    const [member] = await membersOf(trx, org.id, user.id);
    return member;
  });
}

/** Operator CLI `orgs remove-member`: NotFoundError unknown names or not a member, 409 the last owner. */
export async function adminRemoveMember(db: Knex, input: { organization: string; user: string }): Promise<void> {
  await db.transaction(async (trx) => {
    const org = await accountByNameOrId(trx, "organization", input.organization, false);
    const user = await findUserByNameOrId(trx, input.user);
    await lockMemberships(trx, org.id);
    await removeLocked(trx, org.id, user.id);
  });
}

async function accountByNameOrId(
  trx: Knex.Transaction,
  kind: AccountRow["kind"],
  ref: string,
  create: boolean,
): Promise<AccountRow> {
  const byId = isUuid(ref) ? await findAccount(trx, ref) : undefined;
  if (byId?.kind === kind) return byId;
  if (create) return upsertAccount(trx, kind, ref);
  const byName = await findAccountByName(trx, kind, ref);
  if (!byName) throw new NotFoundError(`${kind} '${ref}' not found`);
  return byName;
}
