// The soak's memory sampler against real processes listed in a stack.json, and its summary math.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processStartTime } from "@redline/local-infra";
import { afterAll, describe, expect, it } from "vitest";
import { parseVmRssKiB, type RssSample, RssSampler, readRssKiB, summarizeRss } from "./rss.js";

const dir = mkdtempSync(join(tmpdir(), "redline-soak-rss-"));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

/** A node process holding about `mib` MiB of touched memory until killed. */
function holder(mib: number): ChildProcess {
  const child = spawn(
    process.execPath,
    ["-e", `globalThis.b = Buffer.alloc(${mib} * 1024 * 1024, 1); setInterval(() => {}, 1000)`],
    { stdio: "ignore" },
  );
  children.push(child);
  return child;
}

/** Writes stack.json listing `services` (name → process) the way the supervisor does. */
function writeStack(services: Record<string, ChildProcess>): void {
  const entries = Object.entries(services).map(([name, c]) => [
    name,
    { pid: c.pid, startTime: processStartTime(c.pid as number) },
  ]);
  writeFileSync(join(dir, "stack.json"), JSON.stringify({ pid: process.pid, children: Object.fromEntries(entries) }));
}

/** Resolves once `pid` has at least `kib` KiB resident (the child touched its buffer). */
async function resident(pid: number, kib: number): Promise<void> {
  for (let i = 0; i < 100 && (readRssKiB(pid) ?? 0) < kib; i++) await new Promise((r) => setTimeout(r, 50));
}

describe("VmRSS", () => {
  it("is read from a /proc status text in KiB; absent (a zombie) is null", () => {
    const status = readFileSync("/proc/self/status", "utf8");
    expect(parseVmRssKiB(status)).toBeGreaterThan(1024);
    expect(parseVmRssKiB("Name:\tnode\nVmRSS:\t   123456 kB\nThreads:\t7\n")).toBe(123456);
    expect(parseVmRssKiB("Name:\tnode\nState:\tZ (zombie)\n")).toBeNull();
    expect(readRssKiB(2 ** 22 + 1)).toBeNull(); // above pid_max: no such process
  });
});

describe("RssSampler", () => {
  it("samples the processes stack.json lists and follows a restart to the new process", async () => {
    const small = holder(8);
    const large = holder(64);
    await resident(large.pid as number, 60 * 1024);
    writeStack({ documents: small, gateway: large });
    const sampler = new RssSampler(dir, 60_000);
    sampler.sample(1_000);
    sampler.sample(2_000);
    // The supervisor restarts documents: a new process, stack.json rewritten.
    small.kill("SIGKILL");
    const again = holder(16);
    await resident(again.pid as number, 14 * 1024);
    writeStack({ documents: again, gateway: large });
    sampler.sample(3_000);

    const gateway = sampler.samples.get("gateway") ?? [];
    expect(gateway.map((s) => s.pid)).toEqual([large.pid, large.pid, large.pid]);
    expect(gateway[0].kib).toBeGreaterThan(60 * 1024);
    const documents = sampler.samples.get("documents") ?? [];
    expect(documents.map((s) => s.pid)).toEqual([small.pid, small.pid, again.pid]);
    expect(summarizeRss(documents, 0).restarts).toBe(1);
    // Services stack.json does not list are not sampled.
    expect(sampler.samples.get("agent")).toEqual([]);
  });
});

/** Samples every `stepMs` of one process whose RSS follows `mib(i)`. */
function series(n: number, mib: (i: number) => number, opts: { pid?: number; from?: number; stepMs?: number } = {}) {
  const { pid = 100, from = 0, stepMs = 5_000 } = opts;
  return Array.from(
    { length: n },
    (_, i): RssSample => ({ at: from + i * stepMs, pid, startTime: 1, kib: Math.round(mib(i) * 1024) }),
  );
}

describe("summarizeRss", () => {
  it("fits MiB per minute after the warm-up only, and reports start, end and peak over the whole run", () => {
    // 2 min warming from 60 to 120 MiB, then 8 min growing 0.5 MiB/min (5 s samples).
    const warm = series(24, (i) => 60 + 2.5 * i);
    const steady = series(96, (i) => 120 + 0.5 * (i / 12), { from: 120_000 });
    const s = summarizeRss([...warm, ...steady], 120_000);
    expect(s.slopeMiBPerMin).toBeCloseTo(0.5, 3);
    expect(s.slopeOverMin).toBeCloseTo(95 / 12, 3);
    expect(s.startMiB).toBe(60);
    expect(s.endMiB).toBeCloseTo(120 + 0.5 * (95 / 12), 2);
    expect(s.peakMiB).toBeCloseTo(s.endMiB, 6);
    expect(s.samples).toBe(120);
    expect(s.restarts).toBe(0);
  });

  it("fits the floor: a GC sawtooth over a flat floor is flat, over a rising floor it rises as the floor does", () => {
    // Every 20 s the heap is collected back to the floor; in between it climbs 30 MiB.
    const sawtooth = (floor: (i: number) => number) => series(96, (i) => floor(i) + 7.5 * (i % 4), { from: 120_000 });
    const flatFloor = summarizeRss(sawtooth(() => 150).slice(2), 120_000);
    expect(flatFloor.slopeMiBPerMin).toBeCloseTo(0, 6);
    const rising = summarizeRss(
      sawtooth((i) => 150 + 2 * (i / 12)),
      120_000,
    );
    expect(rising.slopeMiBPerMin).toBeCloseTo(2, 1);
  });

  it("fits the process that ran longest after the warm-up when a restart split the run", () => {
    const before = series(30, (i) => 100 + i, { pid: 1 }); // leaking 12 MiB/min, then restarted
    const after = series(60, (i) => 50 + i, { pid: 2, from: 150_000 }); // leaking on
    const s = summarizeRss([...before, ...after], 0);
    expect(s.restarts).toBe(1);
    expect(s.slopeMiBPerMin).toBeCloseTo(12, 6);
  });

  it("gives no slope with fewer than 3 samples after the warm-up, and zeros for no samples", () => {
    expect(
      summarizeRss(
        series(10, () => 80),
        45_000 - 1,
      ).slopeMiBPerMin,
    ).toBeNull();
    expect(
      summarizeRss(
        series(10, () => 80),
        35_000,
      ).slopeMiBPerMin,
    ).toBe(0);
    expect(summarizeRss([], 0)).toMatchObject({ samples: 0, slopeMiBPerMin: null, restarts: 0 });
  });
});
