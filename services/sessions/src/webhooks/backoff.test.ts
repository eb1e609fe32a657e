// The retry schedule: doubling from the base, capped, jittered within [exp/2, exp], 24 h in all.
import { describe, expect, it } from "vitest";
import { MAX_RETRY_DELAY_MS, nextAttemptAt, RETRY_WINDOW_MS, retryDelayMs } from "./backoff.js";

describe("webhook retry backoff", () => {
  it("doubles from the base with jitter between half and the whole step", () => {
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n, 1000, () => 0))).toEqual([500, 1000, 2000, 4000]);
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n, 1000, () => 0.999999))).toEqual([1000, 2000, 4000, 8000]);
  });

  it("caps the wait", () => {
    expect(retryDelayMs(40, 30_000, () => 0)).toBe(MAX_RETRY_DELAY_MS / 2);
    expect(retryDelayMs(40, 30_000, () => 0.999999)).toBeLessThanOrEqual(MAX_RETRY_DELAY_MS);
  });

  it("gives up once the next attempt falls outside the 24 h window", () => {
    const enqueued = new Date(0);
    expect(nextAttemptAt(3, enqueued, 1000, 10_000, () => 0)?.getTime()).toBe(12_000);
    expect(nextAttemptAt(30, enqueued, 30_000, RETRY_WINDOW_MS - 1000, () => 0)).toBeNull();
  });
});
