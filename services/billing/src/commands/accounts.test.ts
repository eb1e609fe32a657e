// The email on file on a real database (issue #30, "Verified email"): setting it stores it
// unverified and hands back a code to mail; only that code verifies it; a change resets the
// verification; wrong codes end the code; an agent's key can set nothing; an organization key
// sets its user's email, not the organization's.
import { InputError, type Knex } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TABLES } from "../db/tables.js";
import { openTestDb } from "../db/test-db.js";
import { getUserAccount, MAX_VERIFICATIONS_PER_HOUR, setUserEmail, verifyUserEmail } from "./accounts.js";
import { createApiKey, resolveApiKey } from "./api-keys.js";
import { MAX_CODE_ATTEMPTS } from "./codes.js";
import { signUpAgent } from "./handoffs.js";

let db: Knex;
beforeAll(async () => {
  db = await openTestDb("billing_accounts");
});
afterAll(() => db?.destroy());

const now = () => new Date();

describe("user account email", () => {
  it("starts empty, is set trimmed and unverified with a code, verified by that code, and cleared", async () => {
    const { principal } = await createApiKey(db, { user: "email-owner" });
    expect(await getUserAccount(db, principal)).toEqual({
      userId: principal.userId,
      organizationId: "",
      email: "",
    });
    const set = await setUserEmail(db, principal, "  owner@example.com ", now());
    expect(set.account.email).toBe("owner@example.com");
    expect(set.account.emailVerifiedAt).toBeUndefined();
    expect(set.verification).toMatchObject({ email: "owner@example.com" });
    expect(set.verification?.code).toMatch(/^\S{6,}$/);
    const verified = await verifyUserEmail(db, principal, set.verification?.code ?? "", now());
    expect(verified.emailVerifiedAt).toBeInstanceOf(Date);
    expect((await getUserAccount(db, principal)).emailVerifiedAt).toBeInstanceOf(Date);
    // The same verified address again changes nothing and mails nothing.
    const again = await setUserEmail(db, principal, "owner@example.com", now());
    expect(again.verification).toBeUndefined();
    expect(again.account.emailVerifiedAt).toBeInstanceOf(Date);
    expect((await setUserEmail(db, principal, "", now())).account.email).toBe("");
    const [row] = await db(TABLES.accounts).where({ id: principal.userId });
    expect(row.email).toBeNull();
    expect(row.email_verified_at).toBeNull();
  });

  it("resets verification on a change, and the old address's code no longer verifies", async () => {
    const { principal } = await createApiKey(db, { user: "email-changer" });
    const first = await setUserEmail(db, principal, "first@example.com", now());
    await verifyUserEmail(db, principal, first.verification?.code ?? "", now());
    const stale = await setUserEmail(db, principal, "other@example.com", now());
    const second = await setUserEmail(db, principal, "second@example.com", now());
    expect(second.account).toMatchObject({ email: "second@example.com" });
    expect(second.account.emailVerifiedAt).toBeUndefined();
    // The code mailed to other@ ended when second@ was set.
    await expect(verifyUserEmail(db, principal, stale.verification?.code ?? "", now())).rejects.toMatchObject({
      httpStatus: 403,
    });
    const done = await verifyUserEmail(db, principal, second.verification?.code ?? "", now());
    expect(done).toMatchObject({ email: "second@example.com" });
    // A used code is gone: nothing is pending any more.
    await expect(verifyUserEmail(db, principal, second.verification?.code ?? "", now())).rejects.toMatchObject({
      httpStatus: 404,
    });
  });

  it("ends a code after the wrong attempts, even for the right code, and refuses an expired one", async () => {
    const { principal } = await createApiKey(db, { user: "email-guesser" });
    const set = await setUserEmail(db, principal, "guess@example.com", now());
    for (let i = 1; i < MAX_CODE_ATTEMPTS; i++) {
      const err = await verifyUserEmail(db, principal, "wrong-code", now()).catch((e: unknown) => e);
      expect(err).toMatchObject({ httpStatus: 403 });
    }
    await expect(verifyUserEmail(db, principal, "wrong-code", now())).rejects.toMatchObject({ httpStatus: 410 });
    await expect(verifyUserEmail(db, principal, set.verification?.code ?? "", now())).rejects.toMatchObject({
      httpStatus: 410,
    });
    expect((await getUserAccount(db, principal)).emailVerifiedAt).toBeUndefined();

    const late = await setUserEmail(db, principal, "late@example.com", now());
    const afterExpiry = new Date(Date.now() + 2 * 60 * 60 * 1000);
    await expect(verifyUserEmail(db, principal, late.verification?.code ?? "", afterExpiry)).rejects.toMatchObject({
      httpStatus: 404,
    });
  });

  it("limits the codes mailed per hour", async () => {
    const { principal } = await createApiKey(db, { user: "email-spammer" });
    for (let i = 0; i < MAX_VERIFICATIONS_PER_HOUR; i++) {
      await setUserEmail(db, principal, `victim${i}@example.com`, now());
    }
    await expect(setUserEmail(db, principal, "one-more@example.com", now())).rejects.toMatchObject({
      httpStatus: 429,
    });
    expect((await getUserAccount(db, principal)).email).toBe(`victim${MAX_VERIFICATIONS_PER_HOUR - 1}@example.com`);
  });

  it("refuses an agent's key", async () => {
    const agent = await signUpAgent(db, { name: "email-agent", source: "192.0.2.10" }, 100);
    const principal = await resolveApiKey(db, agent.apiKey);
    await expect(setUserEmail(db, principal, "agent@example.com", now())).rejects.toMatchObject({
      httpStatus: 403,
      body: { code: "agent_key" },
    });
  });

  it("refuses malformed addresses with a 400 and keeps the stored one", async () => {
    const { principal } = await createApiKey(db, { user: "email-strict" });
    await setUserEmail(db, principal, "kept@example.com", now());
    for (const bad of [
      "no-at-sign",
      "a@b",
      "Name <a@example.com>",
      "a@example.com, b@example.com",
      `${"x".repeat(250)}@example.com`,
    ]) {
      const err = await setUserEmail(db, principal, bad, now()).catch((e: unknown) => e);
      expect(err, bad).toBeInstanceOf(InputError);
    }
    expect((await getUserAccount(db, principal)).email).toBe("kept@example.com");
  });

  it("stores an organization key's email on its user, not on the organization", async () => {
    const { principal } = await createApiKey(db, { user: "org-member", organization: "email-org" });
    const { account } = await setUserEmail(db, principal, "member@example.com", now());
    expect(account).toMatchObject({ userId: principal.userId, organizationId: principal.organizationId });
    const [org] = await db(TABLES.accounts).where({ id: principal.organizationId });
    expect(org.email).toBeNull();
    const { principal: personal } = await createApiKey(db, { user: "org-member" });
    expect((await getUserAccount(db, personal)).email).toBe("member@example.com");
  });
});
