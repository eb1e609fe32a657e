// Expiring holds on a real database (issue #10): a sync chat turn whose agent died leaves a hold
// that the sweep releases after its expiry, back to the buckets it came from (monthly and
// promotion grants); a turn whose settle comes after the release is still billed, once, and a
// release after a settle changes nothing.
import type { Knex, Principal } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TABLES } from "../db/tables.js";
import { openTestDb } from "../db/test-db.js";
import { createApiKey } from "./api-keys.js";
import { changePlan } from "./plans.js";
import { createPromotion, redeemPromotion } from "./promotions.js";
import { getUsage, releaseExpiredHolds, reserveOperations, settleOperations } from "./quota.js";

let db: Knex;
beforeAll(async () => {
  db = await openTestDb("billing_hold_expiry");
});
afterAll(() => db?.destroy());

const NOW = new Date("2026-11-10T12:00:00Z");
const at = (ms: number) => new Date(NOW.getTime() + ms);
const EXPIRY_MS = 60_000;

let accounts = 0;
async function account(plan = "free"): Promise<Principal> {
  accounts += 1;
  const { principal } = await createApiKey(db, { user: `hold-${accounts}`, plan });
  await changePlan(db, { id: principal.ownerId }, { plan, anchorDay: 1 }, NOW);
  return principal;
}

const hold = (p: Principal, chargeKey: string, ops = 1, holdExpiryMs = EXPIRY_MS) =>
  reserveOperations(db, p, { chargeKey, ops, now: NOW, holdExpiryMs });
const settle = (p: Principal, chargeKey: string, ops: number, now: Date) =>
  settleOperations(db, p, { chargeKey, ops, now });
/** Redeems a fresh promotion of `ops` operations (live for 30 days) for `p`. */
async function grant(p: Principal, name: string, ops: number): Promise<void> {
  const expiresAt = at(30 * 24 * 3600 * 1000);
  const code = await createPromotion(db, { name, ops, expiresAt, maxRedemptions: null }, NOW);
  await redeemPromotion(db, p, code, NOW);
}
const chargeOf = (p: Principal, chargeKey: string) =>
  db(TABLES.charges).where({ owner_id: p.ownerId, charge_key: chargeKey }).first("ops", "state");

describe("releaseExpiredHolds", () => {
  it("releases a hold only after its expiry, back to the monthly bucket", async () => {
    const p = await account();
    await settle(p, "done", 0, NOW); // unknown key: nothing
    await reserveOperations(db, p, { chargeKey: "kept", ops: 2, now: NOW });
    await settle(p, "kept", 2, NOW);
    expect((await hold(p, "chat:lost")).monthlyUsed).toBe(3);
    await releaseExpiredHolds(db, at(EXPIRY_MS - 1));
    expect(await chargeOf(p, "chat:lost")).toEqual({ ops: 1, state: "reserved" });
    expect(await releaseExpiredHolds(db, at(EXPIRY_MS))).toBeGreaterThanOrEqual(1);
    expect(await chargeOf(p, "chat:lost")).toEqual({ ops: 0, state: "expired" });
    expect((await getUsage(db, p, NOW)).monthlyUsed).toBe(2);
  });

  it("bills a turn whose settle comes after the release once, however often it or the sweep repeats", async () => {
    const p = await account();
    await hold(p, "chat:late");
    await hold(p, "chat:died");
    await releaseExpiredHolds(db, at(EXPIRY_MS + 1));
    expect((await getUsage(db, p, NOW)).monthlyUsed).toBe(0);
    // The turn ran: its settle was owed past the expiry (billing down, say), and still bills it.
    expect(await settle(p, "chat:late", 1, at(EXPIRY_MS + 2))).toMatchObject({ monthlyUsed: 1, opsCharged: 1 });
    expect(await chargeOf(p, "chat:late")).toEqual({ ops: 1, state: "settled" });
    // Retries of that settle, concurrent or later, and another sweep charge nothing more.
    await Promise.all([1, 2, 3].map((i) => settle(p, "chat:late", 1, at(EXPIRY_MS + 2 + i))));
    await releaseExpiredHolds(db, at(EXPIRY_MS + 10));
    // A turn that died settles at 0 (or never): released, never billed.
    expect(await settle(p, "chat:died", 0, at(EXPIRY_MS + 11))).toMatchObject({ monthlyUsed: 1, opsCharged: 0 });
    expect(await chargeOf(p, "chat:died")).toEqual({ ops: 0, state: "expired" });
    expect((await getUsage(db, p, NOW)).monthlyUsed).toBe(1);
  });

  it("bills a late settle from a promotion grant first, and within a hard-stop plan's limit", async () => {
    const p = await account();
    await grant(p, "Late", 1);
    await hold(p, "chat:late-promo", 3);
    await releaseExpiredHolds(db, at(EXPIRY_MS));
    expect((await getUsage(db, p, NOW)).promotions[0].opsRemaining).toBe(1);
    const late = await settle(p, "chat:late-promo", 3, at(EXPIRY_MS + 1));
    expect(late).toMatchObject({ opsCharged: 3, monthlyUsed: 2 });
    // The grant is spent: the usage lists live grants only.
    expect(late.promotions).toEqual([]);

    // Free is a hard-stop plan: a late settle past the limit bills only what is left of it.
    const full = await account();
    const { monthlyLimit } = await getUsage(db, full, NOW);
    await hold(full, "chat:late-full", 2);
    await reserveOperations(db, full, { chargeKey: "fill", ops: monthlyLimit - 2, now: NOW });
    await releaseExpiredHolds(db, at(EXPIRY_MS));
    await reserveOperations(db, full, { chargeKey: "fill-more", ops: 1, now: at(EXPIRY_MS) });
    expect(await settle(full, "chat:late-full", 2, at(EXPIRY_MS + 1))).toMatchObject({
      opsCharged: 1,
      monthlyUsed: monthlyLimit,
    });
  });

  it("leaves a hold settled before its expiry billed, and holds without an expiry alone", async () => {
    const p = await account();
    await hold(p, "chat:settled");
    await settle(p, "chat:settled", 1, at(10));
    await reserveOperations(db, p, { chargeKey: "job:forever", ops: 1, now: NOW });
    await releaseExpiredHolds(db, at(10 * EXPIRY_MS));
    expect(await chargeOf(p, "chat:settled")).toEqual({ ops: 1, state: "settled" });
    expect(await chargeOf(p, "job:forever")).toEqual({ ops: 1, state: "reserved" });
    expect((await getUsage(db, p, NOW)).monthlyUsed).toBe(2);
  });

  it("returns a hold drawn from a promotion grant to that grant", async () => {
    const p = await account();
    await grant(p, "Launch", 3);
    const held = await hold(p, "chat:promo", 2);
    expect(held).toMatchObject({ bucketUsed: "promotion", monthlyUsed: 0 });
    expect(held.promotions[0].opsRemaining).toBe(1);
    await releaseExpiredHolds(db, at(EXPIRY_MS));
    const after = await getUsage(db, p, NOW);
    expect(after.monthlyUsed).toBe(0);
    expect(after.promotions[0].opsRemaining).toBe(3);
  });

  it("releases each of many parallel-swept holds exactly once", async () => {
    const p = await account();
    await Promise.all(Array.from({ length: 5 }, (_, i) => hold(p, `chat:many-${i}`)));
    expect((await getUsage(db, p, NOW)).monthlyUsed).toBe(5);
    await Promise.all(Array.from({ length: 4 }, () => releaseExpiredHolds(db, at(EXPIRY_MS))));
    expect((await getUsage(db, p, NOW)).monthlyUsed).toBe(0);
  });
});
