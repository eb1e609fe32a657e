// Invitations to organizations: all SQL of billing.invitations. Functions take a `Knex | Knex.Transaction`;
// commands/invitations.ts opens the transaction.
import { randomUUID } from "node:crypto";
import type { Knex } from "@redline/service-kit";
import { type InvitationRow, type InvitationStatus, type MemberRole, TABLES } from "../tables.js";

type Db = Knex | Knex.Transaction;

/** An invitation with the names people read: its organization's and its inviter's. */
export interface InvitationView extends InvitationRow {
  organization_name: string;
  invited_by_name: string;
}

function withNames(db: Db) {
  return db(`${TABLES.invitations} as i`)
    .join(`${TABLES.accounts} as o`, "o.id", "i.organization_id")
    .join(`${TABLES.accounts} as u`, "u.id", "i.invited_by")
    .select<InvitationView[]>("i.*", "o.name as organization_name", "u.name as invited_by_name");
}

/**
 * Stores a pending invitation of `invitee`, or refreshes the pending one the organization already
 * has for that invitee (new role, inviter and expiry; same id). The row after.
 */
export async function upsertPendingInvitation(
  db: Db,
  row: {
    organization_id: string;
    invitee: { email: string } | { userId: string };
    role: MemberRole;
    invited_by: string;
    created_at: Date;
    expires_at: Date;
  },
): Promise<InvitationRow> {
  const byEmail = "email" in row.invitee;
  const target = byEmail
    ? "(organization_id, lower(email)) where status = 'pending' and email is not null"
    : "(organization_id, user_id) where status = 'pending' and user_id is not null";
  const { rows } = await db.raw<{ rows: InvitationRow[] }>(
    `insert into ${TABLES.invitations}
       (id, organization_id, email, user_id, role, invited_by, status, created_at, expires_at)
     values (:id, :organization_id, :email, :user_id, :role, :invited_by, 'pending', :created_at, :expires_at)
     on conflict ${target} do update set
       role = excluded.role, invited_by = excluded.invited_by,
       created_at = excluded.created_at, expires_at = excluded.expires_at
     returning *`,
    {
      id: randomUUID(),
      organization_id: row.organization_id,
      email: "email" in row.invitee ? row.invitee.email : null,
      user_id: "userId" in row.invitee ? row.invitee.userId : null,
      role: row.role,
      invited_by: row.invited_by,
      created_at: row.created_at,
      expires_at: row.expires_at,
    },
  );
  return rows[0];
}

/** Pending, unexpired invitations of the organization (the per-organization cap counts these). */
export async function countPendingInvitations(db: Db, organizationId: string, now: Date): Promise<number> {
  const row = await db(TABLES.invitations)
    .where({ organization_id: organizationId, status: "pending" })
    .andWhere("expires_at", ">", now)
    .count<{ n: string }[]>({ n: "*" })
    .first();
  return Number(row?.n ?? 0);
}

/** One invitation with its names; undefined when unknown. */
export function findInvitation(db: Db, id: string): Promise<InvitationView | undefined> {
  return withNames(db).where("i.id", id).first();
}

/** The invitation row locked until the transaction ends (acceptance and revocation queue on it). */
export function lockInvitation(trx: Knex.Transaction, id: string): Promise<InvitationRow | undefined> {
  return trx<InvitationRow>(TABLES.invitations).where({ id }).forUpdate().first();
}

/** The organization's invitations of the last 30 days, pending first, then newest first. */
export function invitationsOfOrganization(db: Db, organizationId: string, now: Date): Promise<InvitationView[]> {
  return withNames(db)
    .where("i.organization_id", organizationId)
    .andWhere("i.created_at", ">", new Date(now.getTime() - 30 * 86_400_000))
    .orderByRaw("CASE WHEN i.status = 'pending' AND i.expires_at > ? THEN 0 ELSE 1 END, i.created_at DESC, i.id", [
      now,
    ]);
}

/** Pending, unexpired invitations naming the user by id or by `verifiedEmail` (when given), newest first. */
export function pendingInvitationsFor(
  db: Db,
  userId: string,
  verifiedEmail: string | null,
  now: Date,
): Promise<InvitationView[]> {
  return withNames(db)
    .where("i.status", "pending")
    .andWhere("i.expires_at", ">", now)
    .andWhere((q) => {
      q.where("i.user_id", userId);
      if (verifiedEmail) q.orWhereRaw("lower(i.email) = lower(?)", [verifiedEmail]);
    })
    .orderBy([
      { column: "i.created_at", order: "desc" },
      { column: "i.id", order: "desc" },
    ]);
}

/** Records the decision on a pending invitation. */
export async function decideInvitation(
  db: Db,
  id: string,
  status: Exclude<InvitationStatus, "pending">,
  at: Date,
  acceptedBy: string | null = null,
): Promise<void> {
  await db(TABLES.invitations).where({ id }).update({ status, decided_at: at, accepted_by: acceptedBy });
}
