// <dataDir>/stack.json: what a running stack tells other processes (scripts, tests, a later
// supervisor): who supervises it, where everything listens, and the current service pids.
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { isAlive, processStartTime, type S3Settings } from "@redline/local-infra";
import type { StackAddrs } from "./addrs.js";
import { REPO_ROOT, type ServiceName } from "./names.js";

/** The file name under the data directory. */
export const STACK_FILE = "stack.json";

/** Contents of <dataDir>/stack.json while a stack runs. */
export interface StackInfo {
  /** The supervising process (pnpm start, or the script that called startStack). */
  pid: number;
  /** Its start time (/proc clock ticks) to tell it from a later process reusing the pid. */
  startTime: number | null;
  status: "starting" | "up";
  gatewayUrl: string;
  databaseUrl: string;
  natsUrl: string;
  s3: S3Settings;
  addrs: StackAddrs;
  /**
   * host:port of each service's GET /metrics (a free port the supervisor picked, passed as
   * METRICS_ADDR); empty when the supervisor's environment says METRICS_ADDR=off.
   */
  metrics: Partial<StackAddrs>;
  /** Current service processes (restarts update them). */
  children: Partial<Record<ServiceName, { pid: number; startTime: number | null }>>;
  dataDir: string;
  startedAt: string;
}

/** $REDLINE_DATA_DIR or <repo>/.redline. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.REDLINE_DATA_DIR ? resolve(env.REDLINE_DATA_DIR) : join(REPO_ROOT, ".redline");
}

/** stack.json of dataDir, or null when absent/unreadable (it may be stale: check isStackRunning). */
export function readStackFile(dataDir: string): StackInfo | null {
  try {
    return JSON.parse(readFileSync(join(dataDir, STACK_FILE), "utf8")) as StackInfo;
  } catch {
    return null;
  }
}

/** Writes <dataDir>/stack.json atomically (0600: it carries the object store's secret key and any DATABASE_URL password). */
export function writeStackInfo(dataDir: string, info: StackInfo): void {
  const tmp = join(dataDir, `${STACK_FILE}.${process.pid}.tmp`);
  writeFileSync(tmp, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, join(dataDir, STACK_FILE));
}

/** True when `pid` is alive and (when both are known) still started at `startTime`: not a reused pid. */
export function sameProcess(pid: number, startTime: number | null): boolean {
  if (!isAlive(pid)) return false;
  const now = processStartTime(pid);
  return startTime === null || now === null || now === startTime;
}

/** True when stack.json names a live supervising process (it may still be starting). */
export function isStackRunning(dataDir: string = defaultDataDir()): boolean {
  const info = readStackFile(dataDir);
  return !!info && sameProcess(info.pid, info.startTime);
}

/** The running stack of dataDir when its supervisor is alive and the gateway's /health answers 200; else null. */
export async function findRunningStack(dataDir: string = defaultDataDir()): Promise<StackInfo | null> {
  const info = readStackFile(dataDir);
  if (!info || !sameProcess(info.pid, info.startTime)) return null;
  return (await healthStatus(info.gatewayUrl)) === 200 ? info : null;
}

/** The status of GET <gatewayUrl>/health within 2 s, or "timeout" / "no answer". */
export async function healthStatus(gatewayUrl: string): Promise<number | string> {
  try {
    const res = await fetch(`${gatewayUrl}/health`, { signal: AbortSignal.timeout(2_000) });
    await res.arrayBuffer();
    return res.status;
  } catch (err) {
    return (err as Error).name === "TimeoutError" ? "timeout" : "no answer";
  }
}
