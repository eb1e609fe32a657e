// The quota's write statements on their own: all or nothing without a transaction.
import { randomUUID } from "node:crypto";
import type { Knex } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TABLES } from "../tables.js";
import { openTestDb } from "../test-db.js";
import {
  adjustGrants,
  applySettlement,
  bumpUsage,
  type ChargeRef,
  chargeAndClaim,
  insertCharge,
  isChargeKeyTaken,
  liveGrants,
  markSettled,
  readCharge,
  recentCharges,
  usedIn,
} from "./usage.js";

const PERIOD = "2026-11-01";
const IN_PERIOD = new Date("2026-11-15T12:00:00Z");
let db: Knex;
beforeAll(async () => {
  db = await openTestDb("billing_usage_store");
});
afterAll(() => db?.destroy());

const charge = (chargeKey: string): ChargeRef => ({ ownerId: randomUUID(), chargeKey });

describe("chargeAndClaim", () => {
  it("adds to usage and claims the key in one statement", async () => {
    const ref = charge("turn");
    expect(await chargeAndClaim(db, ref, PERIOD, 3, 10)).toBe(3);
    expect(await readCharge(db, ref, IN_PERIOD)).toMatchObject({
      plan: null,
      latest_period: PERIOD,
      latest_used: 3,
      promo_left: 0,
      state: "reserved",
      ops: 3,
      charge_period: PERIOD,
      charge_used: 3,
      grant_parts: [],
      bucket_used: "monthly",
    });
  });

  it("writes nothing when the cap refuses, including a first reservation over it", async () => {
    const ref = charge("big");
    expect(await chargeAndClaim(db, ref, PERIOD, 11, 10)).toBeNull();
    await chargeAndClaim(db, { ...ref, chargeKey: "fits" }, PERIOD, 10, 10);
    expect(await chargeAndClaim(db, { ...ref, chargeKey: "over" }, PERIOD, 1, 10)).toBeNull();
    expect(await usedIn(db, ref.ownerId, PERIOD)).toBe(10);
    expect(await db(TABLES.charges).where({ owner_id: ref.ownerId }).pluck("charge_key")).toEqual(["fits"]);
  });

  it("fails whole, usage undone, when the key is already claimed", async () => {
    const ref = charge("twice");
    await chargeAndClaim(db, ref, PERIOD, 2, null);
    const err = await chargeAndClaim(db, ref, PERIOD, 2, null).catch((e: unknown) => e);
    expect(isChargeKeyTaken(err)).toBe(true);
    expect(await usedIn(db, ref.ownerId, PERIOD)).toBe(2);
  });
});

describe("applySettlement", () => {
  it("moves usage only from the exact reservation it was computed for", async () => {
    const ref = charge("settle");
    await chargeAndClaim(db, ref, PERIOD, 4, null);
    expect(await applySettlement(db, ref, { reserved: 5, final: 1, cap: null })).toBeNull();
    expect(await applySettlement(db, ref, { reserved: 4, final: 20, cap: 10 })).toBeNull();
    expect(await applySettlement(db, ref, { reserved: 4, final: 1, cap: null })).toBe(1);
    expect(await applySettlement(db, ref, { reserved: 4, final: 1, cap: null })).toBeNull();
    expect((await readCharge(db, ref, IN_PERIOD)).state).toBe("settled");
  });
});

describe("promotion grants and charges", () => {
  async function grant(ownerId: string, opsGranted: number, opsRemaining: number): Promise<string> {
    const promotionId = randomUUID();
    await db(TABLES.promotions).insert({
      id: promotionId,
      code: `CODE-${promotionId}`,
      name: "Test",
      ops: opsGranted,
      expires_at: new Date("2026-12-01T00:00:00Z"),
    });
    const id = randomUUID();
    await db(TABLES.promotionGrants).insert({
      id,
      owner_id: ownerId,
      // The person the grant counts against ("once per person"): here the owner itself.
      beneficiary_id: ownerId,
      promotion_id: promotionId,
      name: "Test",
      ops_granted: opsGranted,
      ops_remaining: opsRemaining,
      expires_at: new Date("2026-12-01T00:00:00Z"),
    });
    return id;
  }

  it("returns operations to a grant never past what it granted, and counts only live grants", async () => {
    const owner = randomUUID();
    const id = await grant(owner, 5, 2);
    await adjustGrants(db, [{ redemption_id: id, ops: 9 }], 1);
    expect(await db(TABLES.promotionGrants).where({ id }).first()).toMatchObject({ ops_remaining: 5 });
    await adjustGrants(db, [{ redemption_id: id, ops: 5 }], -1);
    expect((await readCharge(db, { ownerId: owner, chargeKey: "x" }, IN_PERIOD)).promo_left).toBe(0);
    // Taking more than is left is refused by the table, not silently clamped.
    await expect(adjustGrants(db, [{ redemption_id: id, ops: 1 }], -1)).rejects.toThrow(/promotion_grants_remaining/);
    await adjustGrants(db, [{ redemption_id: id, ops: 3 }], 1);
    expect(await liveGrants(db, owner, IN_PERIOD)).toHaveLength(1);
    expect(await liveGrants(db, owner, new Date("2026-12-01T00:00:00Z"))).toEqual([]);
  });

  it("bumps usage by any delta within a cap and lists recent charges newest first, released ones left out", async () => {
    const ref = charge("first");
    expect(await bumpUsage(db, ref.ownerId, PERIOD, 0, null)).toBe(0);
    expect(await bumpUsage(db, ref.ownerId, PERIOD, 4, 3)).toBeNull();
    expect(await bumpUsage(db, ref.ownerId, PERIOD, 3, 3)).toBe(3);
    expect(await bumpUsage(db, ref.ownerId, PERIOD, -2, null)).toBe(1);
    await insertCharge(db, ref, {
      periodStart: PERIOD,
      ops: 2,
      grantParts: [],
      bucketUsed: "monthly",
      expiresAt: null,
    });
    await insertCharge(
      db,
      { ...ref, chargeKey: "second" },
      { periodStart: PERIOD, ops: 1, grantParts: [], bucketUsed: "overage", expiresAt: null },
    );
    await insertCharge(
      db,
      { ...ref, chargeKey: "released" },
      { periodStart: PERIOD, ops: 1, grantParts: [], bucketUsed: "monthly", expiresAt: null },
    );
    await markSettled(db, { ...ref, chargeKey: "released" }, 0, []);
    const recent = await recentCharges(db, ref.ownerId);
    expect(recent.map((c) => [c.charge_key, c.bucket_used])).toEqual([
      ["second", "overage"],
      ["first", "monthly"],
    ]);
  });
});
