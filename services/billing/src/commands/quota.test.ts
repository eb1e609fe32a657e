// The operations quota on a real database (interface-spec Limits; unshown-parts.md Accounts):
// reserve/settle/release, charge keys billed once, the 429 a spent quota produces, parallel
// reservations against the last operations, and billing periods from each account's anchor day.
import { type Knex, type Principal, QuotaExceededError } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TABLES } from "../db/tables.js";
import { openTestDb } from "../db/test-db.js";
import { createApiKey } from "./api-keys.js";
import { anchorDayOf, changePlan, periodOf } from "./plans.js";
import { getUsage, reserveOperations, settleOperations } from "./quota.js";

let db: Knex;
beforeAll(async () => {
  db = await openTestDb("billing_quota");
});
afterAll(() => db?.destroy());

let accounts = 0;
/** A fresh owner on `plan` whose cycle starts on the 1st (these cases are written in calendar months). */
async function account(plan: string): Promise<Principal> {
  accounts += 1;
  const { principal } = await createApiKey(db, { user: `quota-${accounts}`, plan });
  await changePlan(db, { id: principal.ownerId }, { plan, anchorDay: 1 }, new Date());
  return principal;
}

const reserve = (p: Principal, chargeKey: string, ops: number, now?: Date) =>
  reserveOperations(db, p, { chargeKey, ops, now });
const settle = (p: Principal, chargeKey: string, ops: number, now?: Date) =>
  settleOperations(db, p, { chargeKey, ops, now });

describe("reserve, settle, release", () => {
  it("holds on reserve, charges the difference on settle, and is idempotent afterwards", async () => {
    const p = await account("free");
    expect(await reserve(p, "turn", 1)).toMatchObject({ monthlyUsed: 1, opsCharged: 1, wasBillable: true });
    expect(await settle(p, "turn", 3)).toMatchObject({ monthlyUsed: 3, opsCharged: 3, monthlyRemaining: 497 });
    expect(await settle(p, "turn", 9)).toMatchObject({ monthlyUsed: 3, opsCharged: 3 });
    expect(await db(TABLES.charges).where({ owner_id: p.ownerId }).select("ops", "state")).toEqual([
      { ops: 3, state: "settled" },
    ]);
  });

  it("releases a reservation settled at 0 and bills unknown keys nothing", async () => {
    const p = await account("free");
    await reserve(p, "turn", 2);
    expect(await settle(p, "turn", 0)).toMatchObject({ monthlyUsed: 0, opsCharged: 0, bucketUsed: "none" });
    expect(await settle(p, "never-reserved", 4)).toMatchObject({ monthlyUsed: 0, wasBillable: false });
    expect(await getUsage(db, p)).toMatchObject({ monthlyUsed: 0, monthlyLimit: 500, subscriptionTier: "free" });
  });

  it("bills a charge key once, retried in sequence or in parallel", async () => {
    const p = await account("free");
    await reserve(p, "first", 2);
    expect(await reserve(p, "first", 2)).toMatchObject({ monthlyUsed: 2, opsCharged: 2 });
    await Promise.all(Array.from({ length: 10 }, () => reserve(p, "second", 3)));
    expect((await getUsage(db, p)).monthlyUsed).toBe(5);
  });

  it("caps a growing settle at the limit on hard-stop plans, not on pro", async () => {
    const free = await account("free");
    await reserve(free, "arrange", 498);
    await reserve(free, "turn", 1);
    expect(await settle(free, "turn", 5)).toMatchObject({ monthlyUsed: 500, opsCharged: 2, quotaExhausted: true });
    const pro = await account("pro");
    await reserve(pro, "arrange", 9_999);
    expect(await reserve(pro, "turn", 5)).toMatchObject({ monthlyUsed: 10_004, monthlyRemaining: 0 });
  });
});

describe("quota exhaustion", () => {
  it("refuses with 429, the spec's body and headers, and writes nothing", async () => {
    const p = await account("free");
    const now = new Date("2026-11-30T23:59:00Z");
    await reserve(p, "arrange", 499, now);
    const err = await reserve(p, "turn", 2, now).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QuotaExceededError);
    expect((err as QuotaExceededError).toPayload()).toEqual({
      httpStatus: 429,
      detail: "Monthly operations quota exhausted",
      body: {
        code: "quota_exhausted",
        usage: {
          monthly_used: 499,
          monthly_limit: 500,
          monthly_remaining: 1,
          quota_exhausted: true,
          subscription_tier: "free",
        },
      },
      headers: { "Retry-After": "60", "X-Usage-Limit": "500", "X-Usage-Used": "499", "X-Usage-Remaining": "1" },
    });
    expect(await db(TABLES.charges).where({ owner_id: p.ownerId, charge_key: "turn" })).toEqual([]);
  });

  it("gives exactly 10 of 50 parallel reservations the last 10 operations", async () => {
    const p = await account("free");
    await reserve(p, "arrange", 490);
    const results = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => reserve(p, `turn-${i}`, 1)));
    const refused = results.filter((r) => r.status === "rejected");
    expect(results.length - refused.length).toBe(10);
    for (const r of refused) expect((r as PromiseRejectedResult).reason).toBeInstanceOf(QuotaExceededError);
    expect(await getUsage(db, p)).toMatchObject({ monthlyUsed: 500, quotaExhausted: true });
  });
});

describe("billing periods", () => {
  it("are calendar months in UTC with anchor day 1", () => {
    expect(periodOf(new Date("2026-01-31T23:59:59.999Z"))).toEqual({
      start: "2026-01-01",
      startsAt: new Date("2026-01-01T00:00:00Z"),
      end: new Date("2026-02-01T00:00:00Z"),
    });
    expect(periodOf(new Date("2026-12-15T12:00:00Z")).end).toEqual(new Date("2027-01-01T00:00:00Z"));
  });

  it("start on the anchor day, clamped to the month's length (31 → Feb 28, Feb 29 in leap years)", () => {
    expect(periodOf(new Date("2026-02-10T00:00:00Z"), 31)).toMatchObject({
      start: "2026-01-31",
      end: new Date("2026-02-28T00:00:00Z"),
    });
    expect(periodOf(new Date("2026-02-28T00:00:00Z"), 31)).toMatchObject({
      start: "2026-02-28",
      end: new Date("2026-03-31T00:00:00Z"),
    });
    expect(periodOf(new Date("2028-02-29T05:00:00Z"), 30)).toMatchObject({
      start: "2028-02-29",
      end: new Date("2028-03-30T00:00:00Z"),
    });
    expect(periodOf(new Date("2026-12-20T00:00:00Z"), 15)).toMatchObject({
      start: "2026-12-15",
      end: new Date("2027-01-15T00:00:00Z"),
    });
    expect(periodOf(new Date("2027-01-14T23:59:59Z"), 15).start).toBe("2026-12-15");
  });

  it("default to the day the account was created", () => {
    expect(anchorDayOf({ plan: "free", anchor_day: null, created_at: new Date("2026-03-17T23:00:00Z") })).toBe(17);
    expect(anchorDayOf({ plan: "free", anchor_day: 31, created_at: new Date("2026-03-17T23:00:00Z") })).toBe(31);
  });

  it("reset on the account's own anchor day, and Retry-After counts to it", async () => {
    const p = await account("free");
    await changePlan(db, { id: p.ownerId }, { plan: "free", anchorDay: 31 }, new Date("2026-02-10T00:00:00Z"));
    const beforeReset = new Date("2026-02-27T23:00:00Z");
    await reserve(p, "arrange", 500, beforeReset);
    const err = (await reserve(p, "refused", 1, beforeReset).catch((e: unknown) => e)) as QuotaExceededError;
    expect(err.headers?.["Retry-After"]).toBe("3600");
    expect(await reserve(p, "fresh", 1, new Date("2026-02-28T00:00:01Z"))).toMatchObject({
      monthlyUsed: 1,
      periodStart: new Date("2026-02-28T00:00:00Z"),
      periodEnd: new Date("2026-03-31T00:00:00Z"),
    });
  });

  it("start afresh at the boundary; a late settle bills the reservation's own month", async () => {
    const p = await account("free");
    const january = new Date("2026-01-31T23:59:59.999Z");
    const february = new Date("2026-02-01T00:00:00.000Z");
    await reserve(p, "arrange", 499, january);
    await reserve(p, "late", 1, january);
    await expect(reserve(p, "refused", 1, january)).rejects.toBeInstanceOf(QuotaExceededError);
    expect(await reserve(p, "fresh", 1, february)).toMatchObject({ monthlyUsed: 1, periodEnd: new Date("2026-03-01") });
    expect(await settle(p, "late", 0, february)).toMatchObject({ monthlyUsed: 499, opsCharged: 0 });
    expect(await getUsage(db, p, february)).toMatchObject({ monthlyUsed: 1 });
  });
});
