// The email on file on a real database: set, read, clear, refused when malformed, and always the
// key's user's own (an organization key sets its user's email, not the organization's).
import { InputError, type Knex } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TABLES } from "../db/tables.js";
import { openTestDb } from "../db/test-db.js";
import { getUserAccount, setUserEmail } from "./accounts.js";
import { createApiKey } from "./api-keys.js";

let db: Knex;
beforeAll(async () => {
  db = await openTestDb("billing_accounts");
});
afterAll(() => db?.destroy());

describe("user account email", () => {
  it("starts empty, is set trimmed, read back and cleared", async () => {
    const { principal } = await createApiKey(db, { user: "email-owner" });
    expect(await getUserAccount(db, principal)).toEqual({
      userId: principal.userId,
      organizationId: "",
      email: "",
    });
    const set = await setUserEmail(db, principal, "  owner@example.com ");
    expect(set.email).toBe("owner@example.com");
    expect((await getUserAccount(db, principal)).email).toBe("owner@example.com");
    expect((await setUserEmail(db, principal, "")).email).toBe("");
    const [row] = await db(TABLES.accounts).where({ id: principal.userId });
    expect(row.email).toBeNull();
  });

  it("refuses malformed addresses with a 400 and keeps the stored one", async () => {
    const { principal } = await createApiKey(db, { user: "email-strict" });
    await setUserEmail(db, principal, "kept@example.com");
    for (const bad of [
      "no-at-sign",
      "a@b",
      "Name <a@example.com>",
      "a@example.com, b@example.com",
      `${"x".repeat(250)}@example.com`,
    ]) {
      const err = await setUserEmail(db, principal, bad).catch((e: unknown) => e);
      expect(err, bad).toBeInstanceOf(InputError);
    }
    expect((await getUserAccount(db, principal)).email).toBe("kept@example.com");
  });

  it("stores an organization key's email on its user, not on the organization", async () => {
    const { principal } = await createApiKey(db, { user: "org-member", organization: "email-org" });
    const account = await setUserEmail(db, principal, "member@example.com");
    expect(account).toMatchObject({ userId: principal.userId, organizationId: principal.organizationId });
    const [org] = await db(TABLES.accounts).where({ id: principal.organizationId });
    expect(org.email).toBeNull();
    const { principal: personal } = await createApiKey(db, { user: "org-member" });
    expect((await getUserAccount(db, personal)).email).toBe("member@example.com");
  });
});
