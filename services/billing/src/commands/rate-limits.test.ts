// Token buckets on a real database (issue #13, #30): a request's key and account buckets are
// taken together or not at all, concurrent requests never take more than a bucket holds, and a
// debit records early admissions on each bucket it names.
import type { Knex, Principal } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TABLES } from "../db/tables.js";
import { openTestDb } from "../db/test-db.js";
import { createApiKey } from "./api-keys.js";
import { consumeRateLimit, type RateLimitBucket } from "./rate-limits.js";

let db: Knex;
let principal: Principal;
beforeAll(async () => {
  db = await openTestDb("billing_rate_limits");
  ({ principal } = await createApiKey(db, { user: "rl-unit", plan: "free" }));
});
afterAll(() => db?.destroy());

let n = 0;
/** A fresh bucket of `capacity` that does not refill within a test (one token per 1000 s). */
function bucket(capacity: number): RateLimitBucket {
  n += 1;
  return { subject: `unit-${n}`, limiter: "write", capacity, windowSeconds: capacity * 1000 };
}

const tokensOf = async (b: RateLimitBucket) =>
  Number((await db(TABLES.rateLimitBuckets).where({ subject: b.subject, limiter: b.limiter }).first())?.tokens);

describe("consumeRateLimit over several buckets", () => {
  it("takes from both while both have a token, and from neither once one is empty", async () => {
    const key = bucket(5);
    const account = bucket(2);
    const take = () => consumeRateLimit(db, principal, { buckets: [key, account] });
    const first = await take();
    expect(first).toMatchObject({ allowed: true, retryAfterSeconds: 0 });
    expect(first.buckets.map((b) => [b.remaining, b.exhausted])).toEqual([
      [4, false],
      [1, false],
    ]);
    expect((await take()).allowed).toBe(true);
    const refused = await take();
    expect(refused.allowed).toBe(false);
    expect(refused.buckets.map((b) => b.exhausted)).toEqual([false, true]);
    // One token per 1000 s, and the account bucket is empty.
    expect(refused.retryAfterSeconds).toBeGreaterThan(990);
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(1000);
    expect(refused.usage).toMatchObject({ monthlyLimit: 500 });
    // The account's refusal cost the key nothing: 3 of 5 left, less the refill of a few ms.
    expect(await tokensOf(key)).toBeGreaterThanOrEqual(3);
    expect(await tokensOf(key)).toBeLessThan(3.01);
    // Alone, the key bucket still admits.
    expect((await consumeRateLimit(db, principal, { buckets: [key] })).allowed).toBe(true);
  });

  it("lets exactly the smaller bucket's tokens through a burst of concurrent requests", async () => {
    const account = bucket(4);
    const keys = [bucket(3), bucket(3), bucket(3)];
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        consumeRateLimit(db, principal, { buckets: [keys[i % 3], account] }).then((d) => d.allowed),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(4);
    const taken = await Promise.all(keys.map(tokensOf));
    expect(taken.reduce((sum, t) => sum + (3 - Math.round(t)), 0)).toBe(4);
  });

  it("records a debit on every bucket named, below zero if need be", async () => {
    const a = bucket(5);
    const b = bucket(10);
    const debit = await consumeRateLimit(db, principal, { buckets: [a, b], debit: 7 });
    expect(debit.allowed).toBe(true);
    expect(debit.buckets.map((x) => x.remaining)).toEqual([0, 3]);
    expect(await tokensOf(a)).toBeCloseTo(-2, 1);
    const next = await consumeRateLimit(db, principal, { buckets: [a, b] });
    expect(next.allowed).toBe(false);
    expect(next.buckets.map((x) => x.exhausted)).toEqual([true, false]);
    expect(await tokensOf(b)).toBeCloseTo(3, 1);
  });

  it("refuses malformed requests with InputError", async () => {
    const b = bucket(1);
    for (const req of [
      { buckets: [] },
      { buckets: [b, b] },
      { buckets: [b, bucket(1), bucket(1), bucket(1), bucket(1)] },
      { buckets: [{ ...b, subject: "" }] },
      { buckets: [{ ...b, capacity: 0 }] },
      { buckets: [b], debit: -1 },
    ]) {
      await expect(consumeRateLimit(db, principal, req)).rejects.toMatchObject({ httpStatus: 400 });
    }
  });
});
