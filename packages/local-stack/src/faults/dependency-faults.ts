// The dependency faults of issue #10, shared by test/faults-infra.test.ts and `pnpm bench q`:
// a Postgres, NATS and S3 of their own (restartable on the same port and data directory), a
// process stack over them, and one step per fault — take the dependency down under the mixed
// load, bring it back, wait until clients are served again — with the window marked.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { accountsV1 } from "@redline/grpc-stubs";
import {
  createTestDatabase,
  type EmbeddedNatsHandle,
  type EmbeddedPostgresHandle,
  type EmbeddedS3Handle,
  freePort,
  infraEnv,
  startNats,
  startPostgres,
  startS3,
} from "@redline/local-infra";
import { createRpcClient } from "@redline/service-kit";
import { freeStackEnv } from "../addrs.js";
import type { MixedLoad } from "../mixed-load/mixed-load.js";
import type { FaultWindow } from "../mixed-load/model.js";
import { type RunningStack, startStack } from "../stack.js";

/** The dependencies a fault takes down. */
export const DEPENDENCIES = ["postgres", "nats", "s3"] as const;
export type Dependency = (typeof DEPENDENCIES)[number];

/** One dependency that can be stopped and started again on the same port and data. */
export interface Restartable {
  readonly name: Dependency;
  readonly up: boolean;
  stop(): Promise<void>;
  start(): Promise<void>;
}

/** Postgres, NATS and S3 of one fault run, each restartable. */
export interface FaultInfra {
  databaseUrl: string;
  natsUrl: string;
  s3: { endpoint: string; accessKey: string; secretKey: string; bucket: string; region: string };
  deps: Record<Dependency, Restartable>;
  dataDir: string;
  /** Stops every piece and deletes the data. */
  stop(): Promise<void>;
}

/** A handle restarted by calling `launch` again with the port it first got. */
function restartable<H extends { stop(): Promise<void> }>(
  name: Dependency,
  first: H,
  launch: () => Promise<H>,
): Restartable {
  let handle: H | null = first;
  return {
    name,
    get up() {
      return handle !== null;
    },
    async stop() {
      const h = handle;
      handle = null;
      await h?.stop();
    },
    async start() {
      if (handle) return;
      handle = await launch();
    },
  };
}

/**
 * Starts Postgres (durable: its data outlives a stop), NATS (JetStream on disk) and S3 on fixed
 * free ports under a fresh temp directory, each restartable on the same port and data.
 */
export async function startFaultInfra(log: (line: string) => void = () => {}): Promise<FaultInfra> {
  const dataDir = mkdtempSync(join(tmpdir(), "redline-faults-"));
  // Embedded Postgres runs as the postgres user (we may be root), which must enter the directory.
  chmodSync(dataDir, 0o755);
  const [pgPort, natsPort, s3Port] = [await freePort(), await freePort(), await freePort()];
  const prefixed = (p: string) => (line: string) => log(`[${p}] ${line}`);
  const pgOpts = { dataDir: join(dataDir, "postgres"), port: pgPort, persistent: true, log: prefixed("postgres") };
  const natsOpts = { dataDir: join(dataDir, "nats"), port: natsPort, log: prefixed("nats") };
  const s3Opts = { dataDir: join(dataDir, "s3"), port: s3Port, log: prefixed("s3") };
  const [pg, nats, s3] = await Promise.all([startPostgres(pgOpts), startNats(natsOpts), startS3(s3Opts)]);
  const deps: Record<Dependency, Restartable> = {
    postgres: restartable<EmbeddedPostgresHandle>("postgres", pg, () => startPostgres(pgOpts)),
    nats: restartable<EmbeddedNatsHandle>("nats", nats, () => startNats(natsOpts)),
    s3: restartable<EmbeddedS3Handle>("s3", s3, () => startS3(s3Opts)),
  };
  return {
    databaseUrl: pg.url,
    natsUrl: nats.url,
    s3: {
      endpoint: s3.endpoint,
      accessKey: s3.accessKey,
      secretKey: s3.secretKey,
      bucket: s3.bucket,
      region: "us-east-1",
    },
    deps,
    dataDir,
    async stop() {
      await Promise.allSettled(DEPENDENCIES.map((d) => deps[d].stop()));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A process stack (`pnpm start` shape) over fault infra, with `clients` pro-plan keys. */
export interface FaultStack {
  stack: RunningStack;
  url: string;
  keys: string[];
  stop(): Promise<void>;
}

/** Starts every service as its own process on fresh ports over a fresh database of `infra`. */
export async function startFaultStack(
  infra: FaultInfra,
  clients: number,
  env: NodeJS.ProcessEnv = {},
): Promise<FaultStack> {
  const dataDir = mkdtempSync(join(tmpdir(), "redline-faults-stack-"));
  chmodSync(dataDir, 0o755);
  const stack = await startStack({
    dataDir,
    env: {
      ...process.env,
      ...(await freeStackEnv()),
      ...infraEnv({ ...infra, databaseUrl: await createTestDatabase(infra.databaseUrl, "faults") }),
      LOG_LEVEL: "warn",
      METRICS_ADDR: "off",
      ...env,
    },
  });
  const accounts = createRpcClient(accountsV1.AccountsServiceService, stack.addrs.billing);
  try {
    const keys: string[] = [];
    for (let i = 0; i < clients; i++) {
      keys.push((await accounts.createApiKey({ user: `faults-${i}`, organization: "", plan: "pro" })).apiKey);
    }
    return {
      stack,
      url: stack.gatewayUrl,
      keys,
      async stop() {
        await stack.stop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } finally {
    accounts.close();
  }
}

/** How long a fault lasts and how long to wait for clients to be served again. */
export interface FaultTiming {
  /** How long the dependency stays down (ms). */
  downMs: number;
  /** Load before the fault, to have a steady state (ms). */
  beforeMs?: number;
  /** At most this long after the dependency returns for every request to succeed again (ms). */
  recoverWithinMs?: number;
  /** Load kept running after recovery, to show it stays clean (ms). */
  afterMs?: number;
  /** Run halfway through the outage (e.g. to observe a backlog); its time counts as down time. */
  whileDown?: () => Promise<void>;
}

/** What one fault step measured. */
export interface FaultRun {
  window: FaultWindow;
  /** ms from the dependency's return to the first of `cleanStreak` successive acknowledged requests; null: not within the bound. */
  recoveredAfterMs: number | null;
}

/**
 * Under `load` (running): waits `beforeMs`, takes `dep` down for `downMs`, brings it back, then
 * waits until `cleanStreak` requests in a row are acknowledged (at most `recoverWithinMs`) and
 * `afterMs` more. The window spans from the stop to the end.
 */
export async function runFault(
  load: MixedLoad,
  dep: Restartable,
  timing: FaultTiming,
  cleanStreak = 20,
): Promise<FaultRun> {
  await sleep(timing.beforeMs ?? 2_000);
  const mark = load.markFault(dep.name);
  await dep.stop();
  const downUntil = Date.now() + timing.downMs;
  await sleep(timing.downMs / 2);
  await timing.whileDown?.();
  await sleep(Math.max(0, downUntil - Date.now()));
  await dep.start();
  mark.restored();
  const restoredAt = mark.window.restoredAt as number;
  const recoveredAfterMs = await awaitCleanStreak(load, restoredAt, cleanStreak, timing.recoverWithinMs ?? 30_000);
  await sleep(timing.afterMs ?? 2_000);
  return { window: mark.end(), recoveredAfterMs };
}

/**
 * Polls the load's records (every 200 ms, at most `withinMs`) until `cleanStreak` requests sent
 * since `since` (epoch ms; stream reads left out) are acknowledged in a row. Returns ms from
 * `since` to the first of them, or null when that did not happen within the bound.
 */
export async function awaitCleanStreak(
  load: MixedLoad,
  since: number,
  cleanStreak: number,
  withinMs: number,
): Promise<number | null> {
  const bound = since + withinMs;
  while (Date.now() < bound) {
    let streak = 0;
    let streakStart = 0;
    for (const r of load.records) {
      if (r.startedAt < since || r.kind === "stream") continue;
      if (r.acknowledged) {
        if (streak === 0) streakStart = r.startedAt;
        streak++;
      } else streak = 0;
    }
    if (streak >= cleanStreak) return streakStart - since;
    await sleep(200);
  }
  return null;
}
