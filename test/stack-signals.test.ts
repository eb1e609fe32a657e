// Ctrl-C on `pnpm start` (issue #31): the terminal sends SIGINT to the whole foreground process
// group, and wrappers in it forward it again. The stack is started as `pnpm start` starts it
// (pnpm, a shell, the supervisor in a process group of their own, detached from this one), the
// group gets SIGINT and the supervisor a forwarded copy: every service drains and says so, and
// every port of the stack (gateway, five services, their metrics, embedded Postgres, NATS and
// S3) is free within the services' shutdown deadline. A second Ctrl-C seconds later stops
// everything at once, still leaving nothing listening.
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { canConnect, freePort, isAlive, removePostgresData } from "@redline/local-infra";
import {
  freeStackEnv,
  REPEATED_SIGNAL_WINDOW_MS,
  REPO_ROOT,
  RUNTIME_ARGS,
  readStackFile,
  SERVICE_NAMES,
  type StackInfo,
} from "@redline/local-stack";
import { SHUTDOWN_DEADLINE_MS } from "@redline/service-kit";
import { afterEach, describe, expect, it } from "vitest";

/** A `pnpm start` process group: the output so far and the stack it started. */
interface Started {
  group: ChildProcess & { pid: number };
  output: () => string;
  info: StackInfo;
  dataDir: string;
  /** host:port of everything the stack listens on. */
  listeners: string[];
}

const started: Started[] = [];
afterEach(async () => {
  for (const s of started.splice(0)) {
    for (const child of Object.values(s.info.children))
      if (child && isAlive(child.pid)) process.kill(-child.pid, "SIGKILL");
    if (isAlive(s.info.pid)) process.kill(s.info.pid, "SIGKILL");
    await sleep(500);
    // As root, the embedded cluster lives outside the data directory (postgres-placement).
    removePostgresData(join(s.dataDir, "postgres"));
    rmSync(s.dataDir, { recursive: true, force: true });
  }
});

/**
 * Starts the stack the way `pnpm start` does (minus codegen), in a process group of its own;
 * resolves once it is up. `repeatWindowMs` replaces scripts/start.ts by a runForeground with
 * that window (to send a second Ctrl-C while the first stop surely still runs).
 */
async function startLikePnpmStart(repeatWindowMs?: number): Promise<Started> {
  const dataDir = mkdtempSync(join(os.tmpdir(), "redline-signals-"));
  // Embedded Postgres runs as the postgres user (we may be root), which must enter the directory.
  chmodSync(dataDir, 0o755);
  const infraPorts = { postgres: await freePort(), nats: await freePort(), s3: await freePort() };
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...(await freeStackEnv()),
    REDLINE_DATA_DIR: dataDir,
    REDLINE_POSTGRES_PORT: String(infraPorts.postgres),
    REDLINE_NATS_PORT: String(infraPorts.nats),
    REDLINE_S3_PORT: String(infraPorts.s3),
    LOG_LEVEL: "info",
  };
  // The test stack's infrastructure must not leak in: this stack embeds its own.
  for (const name of ["DATABASE_URL", "NATS_URL", "S3_ENDPOINT", "S3_ACCESS_KEY", "S3_SECRET_KEY", "S3_BUCKET"])
    delete env[name];
  const entry =
    repeatWindowMs === undefined
      ? "scripts/start.ts"
      : `--input-type=module -e 'const s = await (await import("@redline/local-stack")).runForeground({ repeatWindowMs: ${repeatWindowMs} }); if (s) console.log("Redline is up")'`;
  const command = [process.execPath, ...RUNTIME_ARGS.tsx, entry].join(" ");
  const group = spawn("pnpm", ["exec", "sh", "-c", command], {
    cwd: REPO_ROOT,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  }) as ChildProcess & { pid: number };
  let output = "";
  group.stdout?.on("data", (d) => {
    output += d;
  });
  group.stderr?.on("data", (d) => {
    output += d;
  });
  const deadline = Date.now() + 150_000;
  while (!output.includes("Redline is up")) {
    if (Date.now() > deadline || group.exitCode !== null) throw new Error(`the stack did not come up:\n${output}`);
    await sleep(200);
  }
  const info = readStackFile(dataDir) as StackInfo;
  const listeners = [
    ...Object.values(info.addrs),
    ...Object.values(info.metrics),
    ...Object.values(infraPorts).map((port) => `127.0.0.1:${port}`),
  ];
  const s: Started = { group, output: () => output, info, dataDir, listeners };
  started.push(s);
  return s;
}

/** Listeners still accepting connections. */
async function stillListening(listeners: string[]): Promise<string[]> {
  const open = await Promise.all(
    listeners.map(async (addr) => {
      const i = addr.lastIndexOf(":");
      return (await canConnect(Number(addr.slice(i + 1)), addr.slice(0, i))) ? addr : null;
    }),
  );
  return open.filter((a): a is string => a !== null);
}

/** Polls until nothing listens (or `withinMs` passed); the ms it took and what was left. */
async function untilAllFree(listeners: string[], withinMs: number): Promise<{ ms: number; left: string[] }> {
  const from = Date.now();
  let left = await stillListening(listeners);
  while (left.length > 0 && Date.now() - from < withinMs) {
    await sleep(100);
    left = await stillListening(listeners);
  }
  return { ms: Date.now() - from, left };
}

describe("Ctrl-C on pnpm start", () => {
  it("a SIGINT to the process group, forwarded again, stops everything once and gracefully", async () => {
    const s = await startLikePnpmStart();
    expect(s.listeners).toHaveLength(2 * SERVICE_NAMES.length + 3);
    expect(await stillListening(s.listeners)).toEqual(s.listeners);

    process.kill(-s.group.pid, "SIGINT");
    // A wrapper (tsx's CLI, pnpm's shell) forwards the same Ctrl-C to the supervisor again.
    await sleep(50);
    process.kill(s.info.pid, "SIGINT");

    const { ms, left } = await untilAllFree(s.listeners, SHUTDOWN_DEADLINE_MS);
    console.log(`every port of the stack free ${ms} ms after the SIGINT`);
    expect(left).toEqual([]);
    expect(ms).toBeLessThan(SHUTDOWN_DEADLINE_MS);
    const deadline = Date.now() + 10_000;
    while (isAlive(s.info.pid) && Date.now() < deadline) await sleep(100);
    expect(isAlive(s.info.pid)).toBe(false);

    const out = s.output();
    expect(out).toContain(`SIGINT again within ${REPEATED_SIGNAL_WINDOW_MS} ms: the same stop, still draining`);
    expect(out).not.toContain("exiting now");
    expect(out).not.toContain("stopping now");
    // Each service ran its own drain to the end (none was killed half-way).
    for (const name of SERVICE_NAMES) {
      const lines = out.split("\n").filter((l) => l.startsWith(`${name.padEnd(9)} | `));
      expect(
        lines.some((l) => l.includes('"shut down cleanly"')),
        `${name} shut down cleanly`,
      ).toBe(true);
    }
    expect(out).toContain("[supervisor] stopped");
    for (const child of Object.values(s.info.children)) expect(isAlive(child?.pid as number)).toBe(false);
  }, 240_000);

  it("a second Ctrl-C seconds later stops everything at once, leaving nothing listening", async () => {
    const s = await startLikePnpmStart(200);
    process.kill(-s.group.pid, "SIGINT");
    // After the window, while the gateway is still in its unready second: a person pressing again.
    await sleep(400);
    process.kill(s.info.pid, "SIGINT");
    const { ms, left } = await untilAllFree(s.listeners, 15_000);
    console.log(`every port free ${ms} ms after the second SIGINT`);
    expect(left).toEqual([]);
    expect(s.output()).toContain("SIGINT again: stopping now without the drain");
    const deadline = Date.now() + 10_000;
    while (isAlive(s.info.pid) && Date.now() < deadline) await sleep(100);
    expect(isAlive(s.info.pid)).toBe(false);
  }, 240_000);
});
