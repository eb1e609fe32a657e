// kill -9 of one service of a process stack under the mixed load (issue #10), shared by
// test/faults-kill.test.ts and `pnpm bench q`: the service's current pid is read from stack.json,
// SIGKILLed, and the supervisor's restart is timed (a new pid that listens; for the gateway, a
// /health of 200); then the load is watched until clients are served cleanly again.
import { setTimeout as sleep } from "node:timers/promises";
import { canConnect, isAlive } from "@redline/local-infra";
import type { MixedLoad } from "../mixed-load/mixed-load.js";
import type { FaultWindow } from "../mixed-load/model.js";
import type { ServiceName } from "../names.js";
import type { RunningStack } from "../stack.js";
import { readStackFile } from "../stack-file.js";
import { awaitCleanStreak } from "./dependency-faults.js";

/** The order the kill test and the bench kill services in (issue #10). */
export const KILL_ORDER: readonly ServiceName[] = ["gateway", "documents", "sessions", "agent", "billing", "ingest"];

/** How long to load before the kill, and the bounds of the restart and of the recovery (ms). */
export interface KillTiming {
  /** Load before the kill, for a steady state (default 2 s). */
  beforeMs?: number;
  /** At most this long for the supervisor to bring the service back (default 30 s). */
  restartWithinMs?: number;
  /** At most this long after the restart for `cleanStreak` requests in a row to succeed (default 30 s). */
  recoverWithinMs?: number;
  /** Load kept running after recovery (default 2 s). */
  afterMs?: number;
}

/** What one kill measured. */
export interface KillRun {
  service: ServiceName;
  /** The fault window: from the kill (startedAt) through the restart (restoredAt) to the end. */
  window: FaultWindow;
  killedPid: number;
  /** The restarted process; null when it did not come back within the bound. */
  newPid: number | null;
  /** ms from the kill until the new process served (listening; gateway: /health 200); null: not within the bound. */
  restartMs: number | null;
  /** ms from the restart until the first of `cleanStreak` successive acknowledged requests; null: not within the bound. */
  recoveredAfterMs: number | null;
}

/** The pid of `name` the supervisor last recorded in stack.json; throws when there is none. */
export function servicePid(stack: Pick<RunningStack, "dataDir">, name: ServiceName): number {
  const child = readStackFile(stack.dataDir)?.children[name];
  if (!child) throw new Error(`stack.json records no ${name} process`);
  return child.pid;
}

/** True when `name` of the stack serves: its port accepts connections (the gateway: /health is 200). */
async function serving(stack: Pick<RunningStack, "addrs" | "gatewayUrl">, name: ServiceName): Promise<boolean> {
  if (name === "gateway") {
    try {
      const res = await fetch(`${stack.gatewayUrl}/health`, { signal: AbortSignal.timeout(1_000) });
      await res.arrayBuffer();
      return res.status === 200;
    } catch {
      return false;
    }
  }
  const addr = stack.addrs[name];
  const at = addr.lastIndexOf(":");
  return canConnect(Number(addr.slice(at + 1)), addr.slice(0, at));
}

/**
 * SIGKILLs `name` and waits until the supervisor has started a new process that serves; resolves
 * to the killed pid, the new one and the ms in between (null/null when not back within `withinMs`).
 */
export async function killAndAwaitRestart(
  stack: Pick<RunningStack, "dataDir" | "addrs" | "gatewayUrl">,
  name: ServiceName,
  withinMs = 30_000,
): Promise<{ killedPid: number; killedAt: number; newPid: number | null; restartMs: number | null }> {
  const killedPid = servicePid(stack, name);
  const killedAt = Date.now();
  process.kill(killedPid, "SIGKILL");
  const deadline = killedAt + withinMs;
  while (Date.now() < deadline) {
    const pid = readStackFile(stack.dataDir)?.children[name]?.pid;
    if (pid !== undefined && pid !== killedPid && isAlive(pid) && (await serving(stack, name))) {
      return { killedPid, killedAt, newPid: pid, restartMs: Date.now() - killedAt };
    }
    await sleep(50);
  }
  return { killedPid, killedAt, newPid: null, restartMs: null };
}

/**
 * Under `load` (running): waits `beforeMs`, kills `name` with SIGKILL, waits for its restart,
 * then until `cleanStreak` requests sent after the restart succeed in a row, and `afterMs` more.
 * The window is marked on the load (named "kill -9 <name>").
 */
export async function runKill(
  load: MixedLoad,
  stack: Pick<RunningStack, "dataDir" | "addrs" | "gatewayUrl">,
  name: ServiceName,
  timing: KillTiming = {},
  cleanStreak = 20,
): Promise<KillRun> {
  await sleep(timing.beforeMs ?? 2_000);
  const mark = load.markFault(`kill -9 ${name}`);
  const restart = await killAndAwaitRestart(stack, name, timing.restartWithinMs ?? 30_000);
  mark.restored();
  const restoredAt = mark.window.restoredAt as number;
  const recoveredAfterMs =
    restart.newPid === null
      ? null
      : await awaitCleanStreak(load, restoredAt, cleanStreak, timing.recoverWithinMs ?? 30_000);
  await sleep(timing.afterMs ?? 2_000);
  return {
    service: name,
    window: mark.end(),
    killedPid: restart.killedPid,
    newPid: restart.newPid,
    restartMs: restart.restartMs,
    recoveredAfterMs,
  };
}
