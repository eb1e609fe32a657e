// Agent sign-up and takeover links on a real database: the per-source hourly window, codes
// stored hashed, wrong codes counted one at a time under the row lock (concurrent guesses cannot
// exceed the cap), the fifth disabling the link, expiry, and a claim keeping the account id.
import type { Knex, Principal } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TABLES } from "../db/tables.js";
import { openTestDb } from "../db/test-db.js";
import { resolveApiKey } from "./api-keys.js";
import {
  claimHandoff,
  createHandoff,
  HANDOFF_TTL_MS,
  MAX_HANDOFF_ATTEMPTS,
  MAX_HANDOFFS_PER_HOUR,
  signUpAgent,
} from "./handoffs.js";

let db: Knex;
beforeAll(async () => {
  db = await openTestDb("billing_handoffs");
});
afterAll(() => db?.destroy());

async function agent(source = "10.0.0.1"): Promise<{ accountId: string; apiKey: string; principal: Principal }> {
  const made = await signUpAgent(db, { source }, 1000);
  const { keyId: _k, readOnly: _r, ...principal } = await resolveApiKey(db, made.apiKey);
  return { ...made, principal };
}

describe("signUpAgent", () => {
  it("counts sign-ups per source in fixed hours and names Retry-After to the next hour", async () => {
    const at = new Date("2026-12-02T10:59:30Z");
    for (let i = 0; i < 2; i++) await signUpAgent(db, { source: "192.0.2.7" }, 2, at);
    await expect(signUpAgent(db, { source: "192.0.2.7" }, 2, at)).rejects.toMatchObject({
      httpStatus: 429,
      headers: { "Retry-After": "30" },
      body: { code: "signup_limit" },
    });
    // Another source is unaffected, and the next hour starts afresh.
    await signUpAgent(db, { source: "192.0.2.8" }, 2, at);
    await signUpAgent(db, { source: "192.0.2.7" }, 2, new Date("2026-12-02T11:00:01Z"));
    const windows = await db(TABLES.signupWindows).where({ source: "192.0.2.7" }).orderBy("window_start");
    expect(windows.map((w) => w.count)).toEqual([2, 1]);
  });

  it("makes a free agent account whose key resolves to it", async () => {
    const { accountId, principal } = await agent();
    expect(principal).toMatchObject({ userId: accountId, ownerId: accountId, organizationId: "", plan: "free" });
    expect(await db(TABLES.accounts).where({ id: accountId }).first()).toMatchObject({ is_agent: true, kind: "user" });
  });
});

describe("createHandoff and claimHandoff", () => {
  it("stores the code hashed and adopts the account under the same id", async () => {
    const a = await agent();
    const link = await createHandoff(db, a.principal, " Human@Example.com ");
    expect(link.code).toMatch(/^\d{8}$/);
    expect(link.email).toBe("Human@Example.com");
    const row = await db(TABLES.handoffs).where({ id: link.handoffId }).first();
    expect(row.code_hash).not.toContain(link.code);
    const claimed = await claimHandoff(db, { handoffId: link.handoffId, code: link.code });
    expect(claimed.accountId).toBe(a.accountId);
    expect((await resolveApiKey(db, claimed.apiKey)).ownerId).toBe(a.accountId);
    expect(await db(TABLES.accounts).where({ id: a.accountId }).first()).toMatchObject({
      is_agent: false,
      email: "Human@Example.com",
    });
    await expect(claimHandoff(db, { handoffId: link.handoffId, code: link.code })).rejects.toMatchObject({
      httpStatus: 404,
    });
    await expect(createHandoff(db, a.principal, "again@example.com")).rejects.toMatchObject({ httpStatus: 409 });
  });

  it("counts concurrent wrong codes exactly and disables the link at the cap, even for the right code", async () => {
    const a = await agent();
    const link = await createHandoff(db, a.principal, "h@example.com");
    const wrong = link.code === "00000000" ? "00000001" : "00000000";
    const results = await Promise.allSettled(
      Array.from({ length: MAX_HANDOFF_ATTEMPTS + 2 }, () =>
        claimHandoff(db, { handoffId: link.handoffId, code: wrong }),
      ),
    );
    const statuses = results.map((r) =>
      r.status === "rejected" ? (r.reason as { httpStatus: number }).httpStatus : 200,
    );
    expect(statuses.filter((s) => s === 403)).toHaveLength(MAX_HANDOFF_ATTEMPTS - 1);
    expect(statuses.filter((s) => s === 410)).toHaveLength(3);
    const row = await db(TABLES.handoffs).where({ id: link.handoffId }).first();
    expect(row.failed_attempts).toBe(MAX_HANDOFF_ATTEMPTS);
    expect(row.disabled_at).not.toBeNull();
    await expect(claimHandoff(db, { handoffId: link.handoffId, code: link.code })).rejects.toMatchObject({
      httpStatus: 410,
    });
  });

  it("treats an expired link as unknown (404) and refuses bad addresses and non-agent callers", async () => {
    const a = await agent();
    const now = new Date();
    const link = await createHandoff(db, a.principal, "late@example.com", now);
    const later = new Date(now.getTime() + HANDOFF_TTL_MS + 1);
    await expect(claimHandoff(db, { handoffId: link.handoffId, code: link.code }, later)).rejects.toMatchObject({
      httpStatus: 404,
    });
    await expect(createHandoff(db, a.principal, "not an address")).rejects.toMatchObject({ httpStatus: 400 });
    const orgKey = { ...a.principal, organizationId: a.accountId };
    await expect(createHandoff(db, orgKey, "x@example.com")).rejects.toMatchObject({ httpStatus: 409 });
  });

  it("caps the takeover mails of one account per rolling hour (429 with Retry-After)", async () => {
    const a = await agent();
    const start = new Date("2026-12-02T08:00:00Z");
    for (let i = 0; i < MAX_HANDOFFS_PER_HOUR; i++)
      await createHandoff(db, a.principal, `n${i}@example.com`, new Date(start.getTime() + i * 60_000));
    const at = new Date(start.getTime() + 30 * 60_000);
    await expect(createHandoff(db, a.principal, "more@example.com", at)).rejects.toMatchObject({
      httpStatus: 429,
      headers: { "Retry-After": String(30 * 60) },
      body: { code: "handoff_limit" },
    });
    // Once the oldest leaves the hour, one more may go.
    await createHandoff(db, a.principal, "later@example.com", new Date(start.getTime() + 60 * 60_000 + 1000));
  });
});
