// Organization roles on a real database: only owners make owners, the last owner stays, a
// removed member's organization keys are revoked in the same transaction, and the operator
// CLI's add-member re-roles an existing member.
import type { Knex, Principal } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TABLES } from "../db/tables.js";
import { openTestDb } from "../db/test-db.js";
import { createApiKey, resolveApiKey } from "./api-keys.js";
import {
  addMember,
  adminAddMember,
  adminRemoveMember,
  createOrganization,
  createOrganizationApiKey,
  listMembers,
  removeMember,
} from "./organizations.js";

let db: Knex;
beforeAll(async () => {
  db = await openTestDb("billing_organizations");
});
afterAll(() => db?.destroy());

async function person(name: string): Promise<Principal> {
  return (await createApiKey(db, { user: name })).principal;
}

describe("organizations", () => {
  it("lets only owners make owners and keeps the last owner", async () => {
    const owner = await person("o-owner");
    const admin = await person("o-admin");
    const other = await person("o-other");
    const org = await createOrganization(db, owner, "roles-inc");
    expect(org.role).toBe("owner");
    await addMember(db, owner, { organizationId: org.id, userId: admin.userId, role: "admin" });
    await expect(
      addMember(db, admin, { organizationId: org.id, userId: other.userId, role: "owner" }),
    ).rejects.toMatchObject({ httpStatus: 403 });
    await expect(removeMember(db, owner, org.id, owner.userId)).rejects.toMatchObject({
      httpStatus: 409,
      body: { code: "last_owner" },
    });
    await expect(addMember(db, admin, { organizationId: org.id, role: "member" })).rejects.toMatchObject({
      httpStatus: 400,
    });
    await expect(listMembers(db, other, org.id)).rejects.toMatchObject({ httpStatus: 404 });
  });

  it("revokes a removed member's organization keys with the membership", async () => {
    const owner = await person("k-owner");
    const member = await person("k-member");
    const org = await createOrganization(db, owner, "keys-inc");
    await addMember(db, owner, { organizationId: org.id, userId: member.userId });
    const memberAdmin = await adminAddMember(db, { organization: "keys-inc", user: "k-member", role: "admin" });
    expect(memberAdmin.role).toBe("admin");
    const asMember = { ...member };
    const key = await createOrganizationApiKey(db, asMember, { organizationId: org.id, name: "m" });
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
});
