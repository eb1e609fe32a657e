// The quantile and slope math of `pnpm bench` and `pnpm soak`.
import { describe, expect, it } from "vitest";
import { quantile, slope } from "./stats.js";

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
