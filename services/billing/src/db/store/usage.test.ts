// The quota's write statements on their own: all or nothing without a transaction.
import { randomUUID } from "node:crypto";
import type { Knex } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TABLES } from "../tables.js";
import { openTestDb } from "../test-db.js";
import { applySettlement, type ChargeRef, chargeAndClaim, isChargeKeyTaken, readCharge, usedIn } from "./usage.js";

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
