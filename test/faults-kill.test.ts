// Issue #10: kill -9 of each service in turn (gateway, documents, sessions, agent, billing,
// ingest) under the steady mixed load (@redline/local-stack MixedLoad) on a process stack as
// `pnpm start` runs it. The supervisor must restart each; clients see retriable answers (502,
// 503 or 504 with a JSON detail; with the gateway itself down, a refused or reset connection),
// never a 500 or a hang; afterwards every acknowledged write is there, every job reached a
// terminal state and each turn was charged once. Each kill's figures are printed.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { accountsV1 } from "@redline/grpc-stubs";
import { createTestDatabase, infraEnv } from "@redline/local-infra";
import {
  freeStackEnv,
  KILL_ORDER,
  type KillRun,
  MixedLoad,
  type RequestRecord,
  type RunningStack,
  runKill,
  startStack,
} from "@redline/local-stack";
import { createRpcClient } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

/** The longest a client may wait for any answer around a kill (ms): a hang is a failure. */
const WAIT_BOUND_MS = 15_000;
/** The supervisor restarts after 500 ms; a tsx service start takes a few seconds on a busy machine. */
const RESTART_BOUND_MS = 30_000;
const CLIENTS = 3;

const infra = inject("infra");
const dataDir = mkdtempSync(join(os.tmpdir(), "redline-kill-"));
chmodSync(dataDir, 0o755);
let stack: RunningStack | undefined;
let load: MixedLoad | undefined;
const keys: string[] = [];
const runs: KillRun[] = [];
const stackLog: string[] = [];

beforeAll(async () => {
  stack = await startStack({
    dataDir,
    log: (line) => stackLog.push(line),
    env: {
      ...process.env,
      ...(await freeStackEnv()),
      ...infraEnv({ ...infra, databaseUrl: await createTestDatabase(infra.databaseUrl, "faults_kill") }),
      LOG_LEVEL: "warn",
      METRICS_ADDR: "off",
      // A job whose agent was killed is taken over once its lease lapses: short here.
      AGENT_JOB_LEASE_MS: "3000",
      AGENT_JOB_HEARTBEAT_MS: "1000",
      AGENT_JOB_POLL_MS: "250",
      // A sync chat cut by the agent's kill leaves a hold: it expires and billing's sweep releases
      // it well before the final check (the turns here take well under a second).
      AI_TIMEOUT_MS: "20000",
      SYNC_HOLD_EXPIRY_MS: "25000",
      HOLD_SWEEP_MS: "1000",
    },
  });
  const accounts = createRpcClient(accountsV1.AccountsServiceService, stack.addrs.billing);
  try {
    for (let i = 0; i < CLIENTS; i++) {
      keys.push((await accounts.createApiKey({ user: `kill-${i}`, organization: "", plan: "pro" })).apiKey);
    }
  } finally {
    accounts.close();
  }
  load = new MixedLoad({
    url: stack.gatewayUrl,
    keys,
    ratePerClient: 4,
    requestTimeoutMs: WAIT_BOUND_MS + 5_000,
    streamTimeoutMs: 60_000,
  });
  await load.setup();
  load.start();
}, 180_000);

afterAll(async () => {
  await load?.stop();
  await stack?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  if (runs.length > 0) {
    console.log("kill -9 figures (longest client wait, failed requests, restart, recovery):");
    for (const r of runs) console.log(`  ${figureLine(r)}`);
  }
}, 60_000);

/** One kill's figures as printed. */
function figureLine(r: KillRun): string {
  const stats = (load as MixedLoad).stats(r.window).all;
  return (
    `${r.service.padEnd(9)} longest wait ${stats.longestWaitMs} ms, failed ${stats.failed}/${stats.count} ` +
    `${JSON.stringify(stats.errorsByStatus)}, restart ${r.restartMs ?? "-"} ms, recovered ${r.recoveredAfterMs ?? "-"} ms after`
  );
}

/**
 * Failed answers of `records` that break the rule: a non-2xx must be a 4xx/502/503/504 with a JSON
 * detail (a 503 with Retry-After); no answer at all is allowed only while the gateway itself is
 * down (connection refused or reset: a real client retries); nothing waits past the bound.
 */
function badFailures(records: RequestRecord[], gatewayDown: boolean): string[] {
  const bad: string[] = [];
  for (const r of records) {
    if (r.acknowledged) continue;
    const what = `${r.kind} → ${r.status} after ${r.latencyMs} ms (${r.detail ?? "no detail"})`;
    if (r.latencyMs > WAIT_BOUND_MS) bad.push(`${what}: waited past ${WAIT_BOUND_MS} ms`);
    if (r.kind === "stream") continue; // a cut stream is resumed by its client with Last-Event-ID
    if (r.status === "network") {
      if (!gatewayDown) bad.push(`${what}: no answer while the gateway was up`);
    } else if (r.status === "timeout") bad.push(`${what}: no answer within the bound`);
    else if (r.status >= 500 && ![502, 503, 504].includes(r.status)) bad.push(`${what}: not retriable`);
    else if (!r.jsonBody || !r.detail) bad.push(`${what}: no JSON detail`);
    else if (r.status === 503 && !r.retryAfter) bad.push(`${what}: no Retry-After`);
    if (r.detail?.includes("/redline.")) bad.push(`${what}: names an internal RPC`);
  }
  return bad;
}

/** KILL_SERVICES=agent,ingest limits the kills (when chasing one); all of KILL_ORDER by default. */
const services = process.env.KILL_SERVICES
  ? KILL_ORDER.filter((s) => process.env.KILL_SERVICES?.split(",").includes(s))
  : KILL_ORDER;

describe("kill -9 of each service under the mixed load", () => {
  for (const service of services) {
    it(`${service}: restarted by the supervisor; clients see retriable errors, then are served again`, async () => {
      const run = await runKill(load as MixedLoad, stack as RunningStack, service, {
        beforeMs: 2_000,
        restartWithinMs: RESTART_BOUND_MS,
        recoverWithinMs: 30_000,
        afterMs: 2_000,
      });
      runs.push(run);
      console.log(`kill -9 ${figureLine(run)}`);
      expect(run.newPid, `${service} not restarted:\n${stackLog.slice(-20).join("\n")}`).not.toBeNull();
      expect(run.newPid).not.toBe(run.killedPid);
      expect(stackLog.some((l) => l.includes(`${service} exited (signal SIGKILL); restarting`))).toBe(true);
      expect(run.recoveredAfterMs, `${service}: clients not served cleanly again`).not.toBeNull();
      const records = (load as MixedLoad).recordsIn(run.window);
      expect(badFailures(records, service === "gateway")).toEqual([]);
    }, 120_000);
  }

  it("afterwards: every acknowledged write is there, every job ended, each turn charged once", async () => {
    await (load as MixedLoad).stop();
    const report = await (load as MixedLoad).verify({ jobTimeoutMs: 60_000, billingSettleMs: 30_000 });
    console.log(
      `after the kills: jobs by status ${JSON.stringify(report.jobStatuses)}, checked ${JSON.stringify(report.checked)}`,
    );
    expect(report.problems).toEqual([]);
    expect(report.checked.saves).toBeGreaterThan(0);
    expect(report.checked.jobs).toBeGreaterThan(0);
    const terminal = ["completed", "failed", "cancelled"].reduce((n, s) => n + (report.jobStatuses[s] ?? 0), 0);
    expect(terminal).toBe(report.checked.jobs);
  }, 120_000);
});
