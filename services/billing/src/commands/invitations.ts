// Invitations (issue #30): nobody becomes a member of an organization without agreeing. Owners
// and admins invite by user id or by email; the invitee accepts with their own key, and an
// invitation by email is theirs only while that address is their *verified* email, so typing
// someone's address into PATCH /v1/users/me gains nothing. The inviter's answer is the same
// whether or not the invitee exists (an invitation is stored either way), so inviting tells
// nobody which addresses have accounts; an invitation that is not the caller's answers 404.
import {
  ConflictError,
  ForbiddenError,
  InputError,
  isEmailAddress,
  isUuid,
  type Knex,
  NotFoundError,
  type Principal,
} from "@redline/service-kit";
import { addMembership, findAccount, type MemberView, membersOf, organizationsOfUser } from "../db/store/accounts.js";
import {
  countPendingInvitations,
  decideInvitation,
  findInvitation,
  type InvitationView,
  invitationsOfOrganization,
  lockInvitation,
  pendingInvitationsFor,
  upsertPendingInvitation,
} from "../db/store/invitations.js";
import type { InvitationRow } from "../db/tables.js";
import { callerKey } from "./api-keys.js";
import { adminOf, type OrganizationOfUser, roleOf } from "./organizations.js";

/** How long an invitation may be accepted (ms). */
export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** Pending invitations one organization may hold: each names an address someone typed. */
export const MAX_PENDING_INVITATIONS = 100;

/** An invitation as the API shows it: its status with expiry applied. */
export interface InvitationResult extends InvitationView {
  shownStatus: "pending" | "accepted" | "declined" | "revoked" | "expired";
}

function shown(row: InvitationView, now: Date): InvitationResult {
  const expired = row.status === "pending" && row.expires_at.getTime() <= now.getTime();
  return { ...row, shownStatus: expired ? "expired" : row.status };
}

/**
 * POST /v1/organizations/{id}/members `{user_id | email, role?}`: invites a user (owners and
 * admins; only owners invite owners). Inviting the same invitee again refreshes the pending
 * invitation (same id, new role and expiry). The answer never depends on whether the invitee
 * exists. 404 non-member caller, 403 plain member, 400 bad role, both or neither of user_id and
 * email, or a malformed email; 409 already_member (by user id: the admin can list members
 * anyway), invitation_limit past MAX_PENDING_INVITATIONS.
 */
export async function inviteMember(
  db: Knex,
  principal: Principal,
  input: { organizationId: string; userId?: string; email?: string; role?: string },
  now: Date,
): Promise<InvitationResult> {
  const role = roleOf(input.role, "member");
  if (!!input.userId === !!input.email) throw new InputError("send exactly one of user_id and email");
  const email = input.email?.trim();
  if (email !== undefined && !isEmailAddress(email)) throw new InputError("email is not a valid email address");
  // A format check only: it says nothing about whether such a user exists.
  if (input.userId !== undefined && !isUuid(input.userId)) throw new InputError("user_id is not a user id (a uuid)");
  const id = await db.transaction(async (trx) => {
    await callerKey(trx, principal);
    const caller = await adminOf(trx, principal, input.organizationId, "invite members");
    if (role === "owner" && caller.role !== "owner") throw new ForbiddenError("Only owners can invite owners");
    if (input.userId && (await membersOf(trx, input.organizationId, input.userId)).length)
      throw new ConflictError("This user is already a member", { code: "already_member" });
    if ((await countPendingInvitations(trx, input.organizationId, now)) >= MAX_PENDING_INVITATIONS)
      throw new ConflictError(
        `This organization has ${MAX_PENDING_INVITATIONS} pending invitations, the most allowed: revoke some first`,
        { code: "invitation_limit" },
      );
    const invitee = email ? { email } : { userId: input.userId?.toLowerCase() ?? "" };
    const row = await upsertPendingInvitation(trx, {
      organization_id: input.organizationId,
      invitee,
      role,
      invited_by: principal.userId,
      created_at: now,
      expires_at: new Date(now.getTime() + INVITATION_TTL_MS),
    });
    return row.id;
  });
  const stored = await findInvitation(db, id);
  if (!stored) throw new Error(`invitation ${id} vanished after its insert`);
  return shown(stored, now);
}

/** GET /v1/organizations/{id}/invitations (owners and admins): the last 30 days', pending first. */
export async function listOrganizationInvitations(
  db: Knex,
  principal: Principal,
  organizationId: string,
  now: Date,
): Promise<InvitationResult[]> {
  await adminOf(db, principal, organizationId, "see its invitations");
  return (await invitationsOfOrganization(db, organizationId, now)).map((row) => shown(row, now));
}

/** DELETE /v1/organizations/{id}/invitations/{invitation_id} (owners and admins): 404 unknown or not pending. */
export async function revokeInvitation(
  db: Knex,
  principal: Principal,
  organizationId: string,
  invitationId: string,
  now: Date,
): Promise<InvitationResult> {
  await db.transaction(async (trx) => {
    await adminOf(trx, principal, organizationId, "revoke its invitations");
    const row = isUuid(invitationId) ? await lockInvitation(trx, invitationId) : undefined;
    if (!row || row.organization_id !== organizationId || row.status !== "pending")
      throw new NotFoundError("Invitation not found");
    await decideInvitation(trx, row.id, "revoked", now);
  });
  return shown(await invitationOrGone(db, invitationId), now);
}

async function invitationOrGone(db: Knex, id: string): Promise<InvitationView> {
  const row = await findInvitation(db, id);
  if (!row) throw new NotFoundError("Invitation not found");
  return row;
}

/** The caller's verified email, or null (an unverified address identifies nobody). */
async function verifiedEmailOf(db: Knex | Knex.Transaction, userId: string): Promise<string | null> {
  const account = await findAccount(db, userId);
  return account?.email && account.email_verified_at ? account.email : null;
}

/** Whether `row` names the caller: by user id, or by the caller's verified email. */
function isFor(row: InvitationRow, userId: string, verifiedEmail: string | null): boolean {
  if (row.user_id) return row.user_id === userId;
  return verifiedEmail !== null && row.email?.toLowerCase() === verifiedEmail.toLowerCase();
}

/** GET /v1/invitations: the caller's pending invitations, newest first. */
export async function listMyInvitations(db: Knex, principal: Principal, now: Date): Promise<InvitationResult[]> {
  const email = await verifiedEmailOf(db, principal.userId);
  return (await pendingInvitationsFor(db, principal.userId, email, now)).map((row) => shown(row, now));
}

/** The caller's pending invitation locked; NotFoundError (404) for anyone else's, decided or expired. */
async function ownPending(trx: Knex.Transaction, principal: Principal, id: string, now: Date): Promise<InvitationRow> {
  const gone = () => new NotFoundError("Invitation not found");
  if (!isUuid(id)) throw gone();
  const row = await lockInvitation(trx, id);
  if (row?.status !== "pending" || row.expires_at.getTime() <= now.getTime()) throw gone();
  if (!isFor(row, principal.userId, await verifiedEmailOf(trx, principal.userId))) throw gone();
  return row;
}

/**
 * POST /v1/invitations/{id}/accept `{share_email?}`: the caller joins with the invitation's role;
 * `shareEmail` shows their verified email to the organization's members. Only with a personal key
 * (an organization key acts for its organization, not for a person). 404 not the caller's
 * (unknown, decided, expired, or an email the caller has not verified); 403 an organization key;
 * 409 already_member; 401 for a key revoked meanwhile.
 */
export async function acceptInvitation(
  db: Knex,
  principal: Principal,
  input: { invitationId: string; shareEmail?: boolean },
  now: Date,
): Promise<{ organization: OrganizationOfUser; member: MemberView }> {
  if (principal.organizationId)
    throw new ForbiddenError("Accept an invitation with a personal key: an organization key acts for its organization");
  const organizationId = await db.transaction(async (trx) => {
    await callerKey(trx, principal);
    const row = await ownPending(trx, principal, input.invitationId, now);
    if (!(await addMembership(trx, principal.userId, row.organization_id, row.role, input.shareEmail ?? false)))
      throw new ConflictError("You are already a member of this organization", { code: "already_member" });
    await decideInvitation(trx, row.id, "accepted", now, principal.userId);
    return row.organization_id;
  });
  const [[organization], [member]] = await Promise.all([
    organizationsOfUser(db, principal.userId, organizationId),
    membersOf(db, organizationId, principal.userId),
  ]);
  return { organization, member };
}

/** POST /v1/invitations/{id}/decline: 404 when not the caller's pending invitation. */
export async function declineInvitation(
  db: Knex,
  principal: Principal,
  invitationId: string,
  now: Date,
): Promise<InvitationResult> {
  await db.transaction(async (trx) => {
    const row = await ownPending(trx, principal, invitationId, now);
    await decideInvitation(trx, row.id, "declined", now);
  });
  return shown(await invitationOrGone(db, invitationId), now);
}
