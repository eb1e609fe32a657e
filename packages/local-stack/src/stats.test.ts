// The quantile and slope math of `pnpm bench` and `pnpm soak`, and the bench's seeded orders.
import { describe, expect, it } from "vitest";
import { quantile, seededRandom, shuffled, slope } from "./stats.js";

describe("quantile", () => {
  it("takes the nearest rank floor(q × n) of the sorted values, whatever their order", () => {
    const values = [9, 1, 8, 2, 7, 3, 6, 4, 5, 10];
    expect(quantile(values, 0.5)).toBe(6);
    expect(quantile(values, 0)).toBe(1);
    expect(quantile(values, 0.99)).toBe(10);
    expect(quantile(values, 1)).toBe(10);
    expect(values[0]).toBe(9); // the input is not sorted in place
  });

  it("p99 of 1..1000 is 991, p50 of one value is that value, no values give NaN", () => {
    expect(
      quantile(
        Array.from({ length: 1000 }, (_, i) => i + 1),
        0.99,
      ),
    ).toBe(991);
    expect(quantile([42], 0.5)).toBe(42);
    expect(quantile([], 0.5)).toBeNaN();
  });
});

describe("slope", () => {
  it("recovers the slope of a line exactly, and of a noisy line closely", () => {
    const line = Array.from({ length: 20 }, (_, i) => ({ x: i, y: 3 + 0.5 * i }));
    expect(slope(line)).toBeCloseTo(0.5, 12);
    // Alternating ±1 noise around y = 100 - 2x.
    const noisy = Array.from({ length: 101 }, (_, i) => ({ x: i, y: 100 - 2 * i + (i % 2 === 0 ? 1 : -1) }));
    expect(slope(noisy)).toBeCloseTo(-2, 2);
  });

  it("is 0 for a flat series, one point, or points sharing one x", () => {
    expect(slope([1, 2, 3].map((x) => ({ x, y: 7 })))).toBe(0);
    expect(slope([{ x: 1, y: 5 }])).toBe(0);
    expect(
      slope([
        { x: 2, y: 1 },
        { x: 2, y: 9 },
      ]),
    ).toBe(0);
  });

  it("a step (a restart's drop) pulls the fitted slope negative: why the soak fits one process's run", () => {
    const grow = Array.from({ length: 10 }, (_, i) => ({ x: i, y: 100 + i }));
    const restarted = Array.from({ length: 10 }, (_, i) => ({ x: 10 + i, y: 50 + i }));
    expect(slope([...grow, ...restarted])).toBeLessThan(0);
    expect(slope(restarted)).toBeCloseTo(1, 12);
  });
});

describe("seeded orders", () => {
  it("replays the same numbers in [0, 1) for a seed, and others for another seed", () => {
    const a = seededRandom(7);
    const b = seededRandom(7);
    const first = Array.from({ length: 1000 }, () => a());
    expect(Array.from({ length: 1000 }, () => b())).toEqual(first);
    expect(first.every((x) => x >= 0 && x < 1)).toBe(true);
    const other = seededRandom(8);
    expect(Array.from({ length: 1000 }, () => other())).not.toEqual(first);
  });

  it("shuffles into a permutation, leaves the input alone, and puts each item first about equally often", () => {
    const items = ["on", "tracing", "off", "off2"] as const;
    const random = seededRandom(0x0b5e);
    const firsts = new Map<string, number>();
    for (let i = 0; i < 4000; i++) {
      const order = shuffled(items, random);
      expect([...order].sort()).toEqual([...items].sort());
      firsts.set(order[0], (firsts.get(order[0]) ?? 0) + 1);
    }
    expect(items).toEqual(["on", "tracing", "off", "off2"]);
    // A fixed rotation would give 1000 each too; what matters is the next test.
    for (const item of items) expect(firsts.get(item)).toBeGreaterThan(850);
  });

  it("gives each item every predecessor, unlike a rotation", () => {
    const items = ["a", "b", "c", "d"];
    const random = seededRandom(1);
    const pairs = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const order = shuffled(items, random);
      for (let j = 1; j < order.length; j++) pairs.add(`${order[j - 1]}>${order[j]}`);
    }
    expect(pairs.size).toBe(12);
  });
});
