// `pnpm bench q`: what clients see when Postgres restarts, NATS is down and S3 is down, and when
// each service is killed with -9 (kill-faults.ts), each under
// the mixed load (mixed-load.ts) and beside the same load with no fault, in one run on one stack
// with its own restartable infra (faults.ts, the steps test/faults-infra.test.ts asserts on).

import {
  DEFAULT_LOOP,
  DEPENDENCIES,
  type Dependency,
  KILL_ORDER,
  type KindStats,
  MixedLoad,
  runFault,
  runKill,
  startFaultInfra,
  startFaultStack,
  statsOf,
} from "@redline/local-stack";
import type { BenchResult } from "./bench-ingest.js";

const CLIENTS = 4;
/** How long each dependency stays down (ms). */
const DOWN_MS: Record<Dependency, number> = { postgres: 6_000, nats: 8_000, s3: 6_000 };
/** The bound of one request: a longer wait counts as a failure ("timeout"). */
const REQUEST_BOUND_MS = 30_000;

/** "503: 12, timeout: 1" or "none". */
function byStatus(s: KindStats): string {
  const parts = Object.entries(s.errorsByStatus).map(([status, n]) => `${status}: ${n}`);
  return parts.length ? parts.join(", ") : "none";
}

/**
 * Runs the baseline and the three faults on fresh clients each and pushes one result per fault:
 * the longest a client waited (and the no-fault figure beside it), the requests that failed by
 * status out of those sent during the fault, the time from the dependency's return until 20
 * requests in a row succeeded, and whether verify() found every acknowledged write.
 */
export async function benchFaults(results: BenchResult[]): Promise<void> {
  const infra = await startFaultInfra();
  try {
    // A job whose agent is killed is taken over once its lease lapses: 5 s here, not 30.
    const stack = await startFaultStack(infra, CLIENTS * (DEPENDENCIES.length + 1 + KILL_ORDER.length), {
      AGENT_JOB_LEASE_MS: "5000",
      AGENT_JOB_HEARTBEAT_MS: "1000",
    });
    try {
      let block = 0;
      const newLoad = async () => {
        const load = new MixedLoad({
          url: stack.url,
          keys: stack.keys.slice(block * CLIENTS, ++block * CLIENTS),
          loop: [...DEFAULT_LOOP, "export"],
          requestTimeoutMs: REQUEST_BOUND_MS,
          streamTimeoutMs: 60_000,
        });
        await load.setup();
        return load;
      };

      const baseline = await newLoad();
      baseline.start();
      const from = Date.now();
      await new Promise((r) => setTimeout(r, 15_000));
      await baseline.stop();
      const calm = baseline.stats({ startedAt: from, endedAt: Date.now() }).all;
      results.push({
        name: `(q) mixed load, ${CLIENTS} clients, no fault (15 s)`,
        value: `${calm.count} requests, longest wait ${calm.longestWaitMs} ms, p99 ${calm.p99Ms} ms, failed ${calm.failed} (${byStatus(calm)})`,
      });

      for (const dep of DEPENDENCIES) {
        const load = await newLoad();
        load.start();
        let run: Awaited<ReturnType<typeof runFault>>;
        try {
          run = await runFault(load, infra.deps[dep], { downMs: DOWN_MS[dep], recoverWithinMs: 60_000 });
        } finally {
          await load.stop();
        }
        const s = load.stats(run.window).all;
        const inWindow = load.recordsIn(run.window);
        // Pre-signed PUTs refused by S3 itself are not Redline's answers: counted apart.
        const direct = inWindow.filter((r) => r.direct && !r.acknowledged).length;
        if (direct > 0) {
          s.failed -= direct;
          s.count -= direct;
          s.errorsByStatus = statsOf(inWindow.filter((r) => !r.direct)).errorsByStatus;
        }
        const slowest = inWindow.reduce((a, b) => (b.latencyMs > a.latencyMs ? b : a), inWindow[0]);
        const report = await load.verify({ jobTimeoutMs: 60_000 });
        const recovery = run.recoveredAfterMs === null ? "not within 60 s" : `${run.recoveredAfterMs} ms`;
        results.push({
          name: `(q) ${dep} down ${DOWN_MS[dep] / 1000} s under the mixed load (requests in the ${Math.round(
            ((run.window.endedAt ?? 0) - run.window.startedAt) / 1000,
          )} s window)`,
          value:
            `longest wait ${s.longestWaitMs} ms (${slowest?.kind ?? "-"}; no fault ${calm.longestWaitMs} ms), p99 ${s.p99Ms} ms; ` +
            `failed ${s.failed} of ${s.count} (${byStatus(s)})${direct ? ` + ${direct} pre-signed PUTs refused by S3 itself` : ""}; recovered ${recovery} after ${dep} returned; ` +
            `acknowledged writes verified: ${report.problems.length === 0 ? "all present" : `${report.problems.length} problems: ${report.problems.slice(0, 3).join("; ")}`}`,
          target: "no 500, no wait past 30 s, nothing acknowledged lost",
          pass:
            report.problems.length === 0 &&
            !Object.keys(s.errorsByStatus).some((k) => k === "500" || k === "timeout") &&
            s.longestWaitMs < REQUEST_BOUND_MS,
        });
      }

      // kill -9 of each service in turn (kill-faults.ts, the step test/faults-kill.test.ts asserts on).
      for (const service of KILL_ORDER) {
        const load = await newLoad();
        load.start();
        let run: Awaited<ReturnType<typeof runKill>>;
        try {
          run = await runKill(load, stack.stack, service, { restartWithinMs: 60_000, recoverWithinMs: 60_000 });
        } finally {
          await load.stop();
        }
        const s = load.stats(run.window).all;
        const report = await load.verify({ jobTimeoutMs: 60_000 });
        const restart = run.restartMs === null ? "not within 60 s" : `${run.restartMs} ms`;
        const recovery = run.recoveredAfterMs === null ? "not within 60 s" : `${run.recoveredAfterMs} ms`;
        results.push({
          name: `(q) kill -9 ${service} under the mixed load`,
          value:
            `longest wait ${s.longestWaitMs} ms (no fault ${calm.longestWaitMs} ms); failed ${s.failed} of ${s.count} (${byStatus(s)}); ` +
            `restarted (serving) ${restart} after the kill; recovered ${recovery} after the restart; ` +
            `acknowledged writes verified: ${report.problems.length === 0 ? "all present" : `${report.problems.length} problems: ${report.problems.slice(0, 3).join("; ")}`}`,
          target: "restarted; no 500, no wait past 30 s, nothing acknowledged lost, no turn charged twice",
          pass:
            run.restartMs !== null &&
            report.problems.length === 0 &&
            !Object.keys(s.errorsByStatus).some((k) => k === "500" || k === "timeout") &&
            s.longestWaitMs < REQUEST_BOUND_MS,
        });
      }
    } finally {
      await stack.stop();
    }
  } finally {
    await infra.stop();
  }
}
