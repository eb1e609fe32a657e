// Issue #10: `pnpm soak` through its real entry point (scripts/soak.ts under the tsx runtime,
// as the package script runs it) for half a minute, reading its --json report: every kind of the
// mixed load served, no server error, every service's memory sampled, a passing verdict.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { DEFAULT_LOOP, REPO_ROOT, RUNTIME_ARGS, SERVICE_NAMES, type SoakReport } from "@redline/local-stack";
import { describe, expect, it } from "vitest";

/** Runs scripts/soak.ts with `args`; exit code, stdout and stderr. */
function runSoak(args: string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...RUNTIME_ARGS.tsx, join(REPO_ROOT, "scripts", "soak.ts"), ...args], {
      cwd: REPO_ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    // Bounded: a soak that outlives its bound is killed and fails the test.
    const timer = setTimeout(() => child.kill("SIGTERM"), timeoutMs);
    child.once("error", reject);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe("pnpm soak", () => {
  it("refuses a bad option with its usage and exit code 2, starting nothing", async () => {
    const bad = await runSoak(["--minutes", "soon"], 60_000);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--minutes must be a number");
    expect(bad.stderr).toContain("usage: pnpm soak");
    expect(bad.stdout).toBe("");
    const unknown = await runSoak(["--target", "10.0.0.1"], 60_000);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("usage: pnpm soak");
  }, 120_000);

  it("runs the mixed load for half a minute and reports sane figures for every kind and service", async () => {
    const run = await runSoak(["--minutes", "0.5", "--clients", "3", "--sample-seconds", "2", "--json"], 420_000);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as SoakReport;

    expect(report).toMatchObject({ minutes: 0.5, clients: 3, ratePerClient: 4, sampleSeconds: 2 });
    expect(report.durationSeconds).toBeGreaterThanOrEqual(30);
    expect(report.loadAverage).toHaveLength(3);
    // Throughput: every kind the clients loop over (and the streams async chat reads) was served.
    expect(report.throughput.acknowledgedPerSecond).toBeGreaterThan(0);
    // The driver's bound: at most --rate requests a second per client (an async chat's stream
    // read is part of its request, not one more).
    const loopPerSecond = Object.entries(report.kinds)
      .filter(([kind]) => kind !== "stream")
      .reduce((n, [, k]) => n + k.perSecond, 0);
    expect(loopPerSecond).toBeLessThanOrEqual(3 * 4 * 1.05);
    for (const kind of [...new Set(DEFAULT_LOOP), "stream"] as const) {
      const k = report.kinds[kind];
      expect(k, kind).toBeDefined();
      expect(k?.acknowledged, kind).toBeGreaterThan(0);
      expect(k?.acknowledgedPerSecond, kind).toBeCloseTo((k?.acknowledged ?? 0) / report.durationSeconds, 6);
      expect(k?.p50Ms, kind).toBeGreaterThan(0);
      expect(k?.p99Ms, kind).toBeGreaterThanOrEqual(k?.p50Ms ?? 0);
      expect(k?.longestWaitMs, kind).toBeGreaterThanOrEqual(k?.p99Ms ?? 0);
    }
    const sent = Object.values(report.kinds).reduce((n, k) => n + k.count, 0);
    expect(report.throughput.perSecond).toBeCloseTo(sent / report.durationSeconds, 6);
    // No server error, nor an answer that never came.
    expect(Object.keys(report.errorsByStatus).filter((s) => /^5|timeout|network/.test(s))).toEqual([]);
    // Memory of all six services, sampled every 2 s from their live processes, none restarted.
    expect(Object.keys(report.rss).sort()).toEqual([...SERVICE_NAMES].sort());
    for (const [name, m] of Object.entries(report.rss)) {
      expect(m.samples, name).toBeGreaterThanOrEqual(10);
      expect(m.startMiB, name).toBeGreaterThan(20);
      expect(m.peakMiB, name).toBeGreaterThanOrEqual(Math.max(m.startMiB, m.endMiB));
      expect(m.restarts, name).toBe(0);
      expect(m.slopeMiBPerMin, name).not.toBeNull();
    }
    // Everything acknowledged was found afterwards; memory is not judged on half a minute.
    expect(report.verify.problems).toEqual([]);
    expect(report.verify.checked.saves).toBe(report.kinds.save?.acknowledged);
    expect(report.verdict).toEqual({
      pass: true,
      memory: "not judged",
      slopeLimitMiBPerMin: 1,
      problems: [],
      notes: [],
    });
  }, 480_000);
});
