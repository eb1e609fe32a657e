// Accounts and memberships: the SQL of billing's identity side (keys are in api-keys.ts).
// Functions take a `Knex | Knex.Transaction`; the command that needs atomicity opens the transaction.
import { randomUUID } from "node:crypto";
import type { Knex } from "@redline/service-kit";
import { type AccountRow, type MemberRole, type MembershipRow, TABLES } from "../tables.js";

type Db = Knex | Knex.Transaction;

/** The account of `kind` named `name`, created on the free plan when missing. */
export async function upsertAccount(db: Db, kind: AccountRow["kind"], name: string): Promise<AccountRow> {
  await db(TABLES.accounts)
    .insert({ id: randomUUID(), kind, name, plan: "free" })
    .onConflict(["kind", "name"])
    .ignore();
  const row = await db<AccountRow>(TABLES.accounts).where({ kind, name }).first();
  if (!row) throw new Error(`account ${kind}:${name} vanished after its upsert`);
  return row;
}

/** The account by id; undefined when unknown. */
export function findAccount(db: Db, id: string): Promise<AccountRow | undefined> {
  return db<AccountRow>(TABLES.accounts).where({ id }).first();
}

/** The account by id, locked FOR UPDATE (counts and caps of its keys, organizations, mails queue on it). */
export function lockAccountById(db: Knex.Transaction, id: string): Promise<AccountRow | undefined> {
  return db<AccountRow>(TABLES.accounts).where({ id }).forUpdate().first();
}

/**
 * Sets (or with null clears) the email on file of an account with its verification time (null =
 * unverified); the row after, undefined when unknown.
 */
export async function setAccountEmail(
  db: Db,
  id: string,
  email: string | null,
  verifiedAt: Date | null,
): Promise<AccountRow | undefined> {
  const [row] = await db<AccountRow>(TABLES.accounts)
    .where({ id })
    .update({ email, email_verified_at: verifiedAt })
    .returning("*");
  return row;
}

/** Marks the account's email verified if it is still `email` (case-insensitive); the row after, undefined otherwise. */
export async function markEmailVerified(db: Db, id: string, email: string, at: Date): Promise<AccountRow | undefined> {
  const [row] = await db<AccountRow>(TABLES.accounts)
    .where({ id })
    .whereRaw("lower(email) = lower(?)", [email])
    .update({ email_verified_at: at })
    .returning("*");
  return row;
}

/** Organizations the user created self-service (the per-user cap counts these). */
export async function countOrganizationsCreatedBy(db: Db, userId: string): Promise<number> {
  const row = await db(TABLES.accounts)
    .where({ kind: "organization", created_by: userId })
    .count<{ n: string }[]>({ n: "*" })
    .first();
  return Number(row?.n ?? 0);
}

/** Sets an account's plan name. */
export async function setAccountPlan(db: Db, id: string, plan: string): Promise<void> {
  await db(TABLES.accounts).where({ id }).update({ plan });
}

/** Makes the user a member of the organization with `role`; false (nothing changed) when already one. */
export async function addMembership(
  db: Db,
  userId: string,
  organizationId: string,
  role: MemberRole = "member",
  shareEmail = false,
): Promise<boolean> {
  const rows = await db(TABLES.memberships)
    .insert({ user_id: userId, organization_id: organizationId, role, share_email: shareEmail })
    .onConflict(["user_id", "organization_id"])
    .ignore()
    .returning("user_id");
  return rows.length > 0;
}

/** Sets a member's role; false when the user is not a member. */
export async function setMemberRole(
  db: Db,
  userId: string,
  organizationId: string,
  role: MemberRole,
): Promise<boolean> {
  return (
    (await db(TABLES.memberships).where({ user_id: userId, organization_id: organizationId }).update({ role })) > 0
  );
}

/** The user's membership of the organization; undefined when not a member. */
export function findMembership(db: Db, userId: string, organizationId: string): Promise<MembershipRow | undefined> {
  return db<MembershipRow>(TABLES.memberships).where({ user_id: userId, organization_id: organizationId }).first();
}

/** Sets whether the member's verified email shows in the member list; false when not a member. */
export async function setShareEmail(db: Db, userId: string, organizationId: string, share: boolean): Promise<boolean> {
  const n = await db(TABLES.memberships)
    .where({ user_id: userId, organization_id: organizationId })
    .update({ share_email: share });
  return n > 0;
}

/** Ends a membership; false when there was none. */
export async function deleteMembership(db: Db, userId: string, organizationId: string): Promise<boolean> {
  return (await db(TABLES.memberships).where({ user_id: userId, organization_id: organizationId }).delete()) > 0;
}

/** Locks the organization's membership rows (FOR UPDATE), so role checks and changes agree. */
export async function lockMemberships(db: Db, organizationId: string): Promise<void> {
  await db(TABLES.memberships).where({ organization_id: organizationId }).forUpdate().select("user_id");
}

/** Owners of the organization still on the list. */
export async function countOwners(db: Db, organizationId: string): Promise<number> {
  const row = await db(TABLES.memberships)
    .where({ organization_id: organizationId, role: "owner" })
    .count<{ n: string }[]>({ n: "*" })
    .first();
  return Number(row?.n ?? 0);
}

/** An organization with the user's role in it. */
export interface OrganizationOfUser extends AccountRow {
  role: MemberRole;
}

/** The organizations the user belongs to, by name; with `organizationId`, only that one. */
export function organizationsOfUser(db: Db, userId: string, organizationId?: string): Promise<OrganizationOfUser[]> {
  const q = db(`${TABLES.memberships} as m`)
    .join(`${TABLES.accounts} as a`, "a.id", "m.organization_id")
    .where("m.user_id", userId)
    .select<OrganizationOfUser[]>("a.*", "m.role")
    .orderBy("a.name");
  if (organizationId) q.andWhere("m.organization_id", organizationId);
  return q;
}

/** A member as listings show it. */
export interface MemberView {
  user_id: string;
  name: string;
  /** The verified email when the member chose to share it; null otherwise. */
  email: string | null;
  role: MemberRole;
}

/**
 * The organization's members: owners, admins, then members, each by name. An email shows only
 * when it is verified and its member chose to share it (share_email).
 */
export function membersOf(db: Db, organizationId: string, userId?: string): Promise<MemberView[]> {
  const q = db(`${TABLES.memberships} as m`)
    .join(`${TABLES.accounts} as a`, "a.id", "m.user_id")
    .where("m.organization_id", organizationId)
    .select<MemberView[]>(
      "m.user_id",
      "a.name",
      db.raw("CASE WHEN m.share_email AND a.email_verified_at IS NOT NULL THEN a.email END AS email"),
      "m.role",
    )
    .orderByRaw("CASE m.role WHEN 'owner' THEN 0 WHEN 'admin' THEN 1 ELSE 2 END, a.name");
  if (userId) q.andWhere("m.user_id", userId);
  return q;
}

/** The account of `kind` with this name; undefined when none. */
export function findAccountByName(db: Db, kind: AccountRow["kind"], name: string): Promise<AccountRow | undefined> {
  return db<AccountRow>(TABLES.accounts).where({ kind, name }).first();
}

/** Inserts an account; false when (kind, name) is taken. */
export async function insertAccount(
  db: Db,
  row: Pick<AccountRow, "id" | "kind" | "name" | "plan" | "is_agent"> & Partial<Pick<AccountRow, "created_by">>,
): Promise<boolean> {
  const rows = await db(TABLES.accounts).insert(row).onConflict(["kind", "name"]).ignore().returning("id");
  return rows.length > 0;
}

/**
 * Turns an agent account into a human's: the email on file set and verified at `at` (the claim
 * proved the mailbox), the agent mark cleared.
 */
export async function adoptAccount(db: Db, id: string, email: string, at: Date): Promise<void> {
  await db(TABLES.accounts).where({ id }).update({ email, email_verified_at: at, is_agent: false });
}
