// Organization roles and invitations on a real database (issue #30): nobody joins without
// accepting; an invitation by email is its invitee's only once that address is verified; only
// owners make owners and the last owner stays; a removed member's organization keys are revoked
// with the membership; a user creates a bounded number of organizations, each starting on the
// configured plan; the operator CLI's add-member re-roles an existing member.
import type { Knex, Principal } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TABLES } from "../db/tables.js";
import { openTestDb } from "../db/test-db.js";
import { setUserEmail, verifyUserEmail } from "./accounts.js";
import { createApiKey, resolveApiKey } from "./api-keys.js";
import { acceptInvitation, declineInvitation, inviteMember, listMyInvitations } from "./invitations.js";
import {
  adminAddMember,
  adminRemoveMember,
  createOrganization,
  createOrganizationApiKey,
  listMembers,
  removeMember,
  updateMember,
} from "./organizations.js";

let db: Knex;
beforeAll(async () => {
  db = await openTestDb("billing_organizations");
});
afterAll(() => db?.destroy());

const LIMITS = { maxOrganizationsPerUser: 3, newOrganizationPlan: "none" };
const now = () => new Date();

async function person(name: string): Promise<Principal> {
  const { apiKey } = await createApiKey(db, { user: name });
  return resolveApiKey(db, apiKey);
}

/** Invites `who` by user id and has them accept: the only way in. */
async function join(org: string, by: Principal, who: Principal, role?: string): Promise<void> {
  const invitation = await inviteMember(db, by, { organizationId: org, userId: who.userId, role }, now());
  await acceptInvitation(db, who, { invitationId: invitation.id }, now());
}

describe("organizations", () => {
  it("lets only owners make owners and keeps the last owner", async () => {
    const owner = await person("o-owner");
    const admin = await person("o-admin");
    const other = await person("o-other");
    const org = await createOrganization(db, owner, "roles-inc", LIMITS);
    expect(org.role).toBe("owner");
    await join(org.id, owner, admin, "admin");
    await expect(
      inviteMember(db, admin, { organizationId: org.id, userId: other.userId, role: "owner" }, now()),
    ).rejects.toMatchObject({ httpStatus: 403 });
    await join(org.id, admin, other);
    await expect(
      updateMember(db, admin, { organizationId: org.id, userId: other.userId, role: "owner" }),
    ).rejects.toMatchObject({ httpStatus: 403 });
    await expect(
      updateMember(db, owner, { organizationId: org.id, userId: owner.userId, role: "admin" }),
    ).rejects.toMatchObject({ httpStatus: 409, body: { code: "last_owner" } });
    await expect(removeMember(db, owner, org.id, owner.userId)).rejects.toMatchObject({
      httpStatus: 409,
      body: { code: "last_owner" },
    });
    await expect(inviteMember(db, admin, { organizationId: org.id, role: "member" }, now())).rejects.toMatchObject({
      httpStatus: 400,
    });
    const stranger = await person("o-stranger");
    await expect(listMembers(db, stranger, org.id)).rejects.toMatchObject({ httpStatus: 404 });
  });

  it("revokes a removed member's organization keys with the membership", async () => {
    const owner = await person("k-owner");
    const member = await person("k-member");
    const org = await createOrganization(db, owner, "keys-inc", LIMITS);
    await join(org.id, owner, member);
    const memberAdmin = await adminAddMember(db, { organization: "keys-inc", user: "k-member", role: "admin" });
    expect(memberAdmin.role).toBe("admin");
    const key = await createOrganizationApiKey(db, member, { organizationId: org.id, name: "m" }, 25);
    expect((await resolveApiKey(db, key.apiKey)).ownerId).toBe(org.id);
    await removeMember(db, owner, org.id, member.userId);
    await expect(resolveApiKey(db, key.apiKey)).rejects.toMatchObject({ httpStatus: 401 });
    expect(await db(TABLES.memberships).where({ organization_id: org.id })).toHaveLength(1);
  });

  it("makes the CLI's first member of a new organization its owner and refuses removing it", async () => {
    const { principal } = await createApiKey(db, { user: "cli-first", organization: "cli-org" });
    const members = await listMembers(db, principal, principal.organizationId);
    expect(members.map((m) => m.role)).toEqual(["owner"]);
    await expect(adminRemoveMember(db, { organization: "cli-org", user: "cli-first" })).rejects.toMatchObject({
      httpStatus: 409,
    });
    await expect(adminRemoveMember(db, { organization: "nope-org", user: "cli-first" })).rejects.toMatchObject({
      httpStatus: 404,
    });
  });

  it("caps the organizations a user creates and starts each on the configured plan", async () => {
    const founder = await person("cap-founder");
    const made = [];
    for (let i = 0; i < LIMITS.maxOrganizationsPerUser; i++) {
      made.push(await createOrganization(db, founder, `cap-org-${i}`, LIMITS));
    }
    await expect(createOrganization(db, founder, "cap-org-extra", LIMITS)).rejects.toMatchObject({
      httpStatus: 409,
      body: { code: "organization_limit" },
    });
    const plans = await db(TABLES.accounts)
      .whereIn(
        "id",
        made.map((o) => o.id),
      )
      .pluck("plan");
    expect(plans).toEqual(["none", "none", "none"]);
  });
});

describe("invitations", () => {
  it("answers the inviter alike whether or not the address belongs to anyone", async () => {
    const owner = await person("i-owner");
    const org = await createOrganization(db, owner, "uniform-inc", LIMITS);
    const exists = await person("i-exists");
    const set = await setUserEmail(db, exists, "exists@uniform.test", now());
    await verifyUserEmail(db, exists, set.verification?.code ?? "", now());
    const a = await inviteMember(db, owner, { organizationId: org.id, email: "exists@uniform.test" }, now());
    const b = await inviteMember(db, owner, { organizationId: org.id, email: "nobody@uniform.test" }, now());
    const shape = (i: typeof a) => ({ ...i, id: "", email: "", created_at: null, expires_at: null });
    expect(Object.keys(a).sort()).toEqual(Object.keys(b).sort());
    expect({ ...shape(a), email: null }).toEqual({ ...shape(b), email: null });
    expect(a.shownStatus).toBe("pending");
    expect(await listMembers(db, owner, org.id)).toHaveLength(1);
  });

  it("belongs to an email's owner only once verified; the stranger who typed it gets nothing", async () => {
    const owner = await person("v-owner");
    const org = await createOrganization(db, owner, "verified-inc", LIMITS);
    const stranger = await person("v-stranger");
    await setUserEmail(db, stranger, "ceo@verified.test", now());
    const invitation = await inviteMember(
      db,
      owner,
      { organizationId: org.id, email: "ceo@verified.test", role: "admin" },
      now(),
    );
    expect(await listMyInvitations(db, stranger, now())).toEqual([]);
    await expect(acceptInvitation(db, stranger, { invitationId: invitation.id }, now())).rejects.toMatchObject({
      httpStatus: 404,
    });
    await expect(listMembers(db, stranger, org.id)).rejects.toMatchObject({ httpStatus: 404 });

    const ceo = await person("v-ceo");
    const set = await setUserEmail(db, ceo, "ceo@verified.test", now());
    await verifyUserEmail(db, ceo, set.verification?.code ?? "", now());
    expect((await listMyInvitations(db, ceo, now())).map((i) => i.id)).toEqual([invitation.id]);
    const joined = await acceptInvitation(db, ceo, { invitationId: invitation.id, shareEmail: true }, now());
    expect(joined.member).toMatchObject({ user_id: ceo.userId, role: "admin" });
    await expect(acceptInvitation(db, ceo, { invitationId: invitation.id }, now())).rejects.toMatchObject({
      httpStatus: 404,
    });
  });

  it("shows a member's email only when they chose to share it, and only they choose", async () => {
    const owner = await person("s-owner");
    const org = await createOrganization(db, owner, "share-inc", LIMITS);
    const member = await person("s-member");
    const set = await setUserEmail(db, member, "member@share.test", now());
    await verifyUserEmail(db, member, set.verification?.code ?? "", now());
    await join(org.id, owner, member);
    const emailOf = async () => (await listMembers(db, owner, org.id)).find((m) => m.user_id === member.userId)?.email;
    expect(await emailOf()).toBeNull();
    await expect(
      updateMember(db, owner, { organizationId: org.id, userId: member.userId, shareEmail: true }),
    ).rejects.toMatchObject({ httpStatus: 403 });
    await updateMember(db, member, { organizationId: org.id, userId: member.userId, shareEmail: true });
    expect(await emailOf()).toBe("member@share.test");
  });

  it("is declined once, and an organization key cannot accept", async () => {
    const owner = await person("d-owner");
    const org = await createOrganization(db, owner, "decline-inc", LIMITS);
    const invitee = await person("d-invitee");
    const invitation = await inviteMember(db, owner, { organizationId: org.id, userId: invitee.userId }, now());
    const orgKey = await createApiKey(db, { user: "d-invitee", organization: "d-other-org" });
    const asOrg = await resolveApiKey(db, orgKey.apiKey);
    await expect(acceptInvitation(db, asOrg, { invitationId: invitation.id }, now())).rejects.toMatchObject({
      httpStatus: 403,
    });
    expect((await declineInvitation(db, invitee, invitation.id, now())).shownStatus).toBe("declined");
    await expect(declineInvitation(db, invitee, invitation.id, now())).rejects.toMatchObject({ httpStatus: 404 });
  });
});
