// The local Redline stack: embedded infra (or external via env) plus the six services as
// separate child processes, supervised (prefixed logs, restart with backoff, ordered stop).
// Used by scripts/start.ts (foreground) and by scripts such as demo.ts (background).
import type { ChildProcess } from "node:child_process";
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  type WriteStream,
  writeFileSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import {
  canConnect,
  childExited,
  forEachLine,
  freePort,
  infraEnv,
  isAlive,
  isPortFree,
  type LocalInfra,
  processArgs,
  processStartTime,
  type S3Settings,
  signal,
  spawnTied,
  startLocalInfra,
  waitForExit,
} from "../../packages/local-infra/src/index.js";
import { DEFAULT_ADDRS } from "../../packages/service-kit/src/config.js";
import { createDb } from "../../packages/service-kit/src/db.js";
import { migrateLatest, type SchemaSpec } from "../../packages/service-kit/src/migrations.js";
import { SHUTDOWN_DEADLINE_MS } from "../../packages/service-kit/src/shutdown.js";
import * as agentSchema from "../../services/agent/src/db/migrations.js";
import * as billingSchema from "../../services/billing/src/db/migrations.js";
import * as documentsSchema from "../../services/documents/src/db/migrations.js";
import * as ingestSchema from "../../services/ingest/src/db/migrations.js";
import * as sessionsSchema from "../../services/sessions/src/db/migrations.js";

/** Repository root (scripts/lib/../..). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The five gRPC services, started together before the gateway. */
export const BACKEND_SERVICES = ["documents", "sessions", "billing", "ingest", "agent"] as const;
export type BackendName = (typeof BACKEND_SERVICES)[number];
export type ServiceName = BackendName | "gateway";
export const SERVICE_NAMES: readonly ServiceName[] = [...BACKEND_SERVICES, "gateway"];

/** host:port of each gRPC service and of the gateway's HTTP listener. */
export type StackAddrs = Record<ServiceName, string>;

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

export interface StartStackOptions {
  /** Default: $REDLINE_DATA_DIR or <repo>/.redline. */
  dataDir?: string;
  /** Base environment of the children; also read for DATABASE_URL/NATS_URL/S3_*, *_ADDR, PORT, HOST. Default process.env. */
  env?: NodeJS.ProcessEnv;
  /**
   * true (pnpm start): service output goes to stdout prefixed with the service name.
   * false (default): everything goes to <dataDir>/logs/stack.log.
   */
  foreground?: boolean;
  /** Overrides where supervisor and service lines go. */
  log?: (line: string) => void;
  /** How long to wait for the services and the gateway's /health (default 60 s). */
  healthTimeoutMs?: number;
  /** Aborts a startup in progress (everything started so far is stopped). */
  signal?: AbortSignal;
  /** Entry file of a service (default <repo>/services/<name>/src/main.ts, or under $REDLINE_SERVICES_ROOT); for tests. */
  serviceEntry?: (name: ServiceName) => string;
  /**
   * Apply every service's migrations before starting the services, which only check their
   * schema (default true; false when `serviceEntry` replaces the services: fakes own no schema).
   */
  migrate?: boolean;
  /**
   * How services run. "tsx" (default): src/main.ts through the tsx loader, workspace packages
   * resolved to their TypeScript sources. "dist": the compiled dist/main.js of `pnpm build` with
   * plain node, workspace packages resolved to their dist/, as in production.
   */
  runtime?: StackRuntime;
}

export type StackRuntime = "tsx" | "dist";

/** The export condition under which workspace packages name their TypeScript sources. */
const SOURCE_CONDITION = "@redline/source";

/** Node arguments before a service's entry file, by runtime (any tsx child process needs the condition). */
export const RUNTIME_ARGS: Record<StackRuntime, string[]> = {
  tsx: [`--conditions=${SOURCE_CONDITION}`, "--import", "tsx"],
  dist: [],
};

/** `env` for a service of `runtime`: under "dist", without a source condition inherited via NODE_OPTIONS (vitest sets one). */
function runtimeEnv(env: NodeJS.ProcessEnv, runtime: StackRuntime): NodeJS.ProcessEnv {
  if (runtime !== "dist" || !env.NODE_OPTIONS) return env;
  const options = env.NODE_OPTIONS.split(/\s+/).filter((o) => o && o !== `--conditions=${SOURCE_CONDITION}`);
  return { ...env, NODE_OPTIONS: options.join(" ") };
}

export interface RunningStack extends Omit<StackInfo, "children" | "status" | "startTime" | "startedAt"> {
  /**
   * Stops gateway, then services (SIGTERM, SIGKILL after STOP_GRACE_MS), then infra; removes
   * stack.json. Idempotent.
   */
  stop(): Promise<void>;
}

const STACK_FILE = "stack.json";

/** Appends to a log file, first moving it to <file>.1 when it exceeds 10 MB. */
function openLog(path: string): WriteStream {
  try {
    if (statSync(path).size > 10 * 1024 * 1024) renameSync(path, `${path}.1`);
  } catch {
    // no file yet
  }
  return createWriteStream(path, { flags: "a" });
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

function sameProcess(pid: number, startTime: number | null): boolean {
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

async function healthStatus(gatewayUrl: string): Promise<number | string> {
  try {
    const res = await fetch(`${gatewayUrl}/health`, { signal: AbortSignal.timeout(2_000) });
    await res.arrayBuffer();
    return res.status;
  } catch (err) {
    return (err as Error).name === "TimeoutError" ? "timeout" : "no answer";
  }
}

function parseAddr(addr: string, variable: string): { host: string; port: number } {
  const i = addr.lastIndexOf(":");
  const port = Number(addr.slice(i + 1));
  if (i <= 0 || !Number.isInteger(port) || port <= 0 || port > 65535)
    throw new Error(`${variable}=${addr} is not host:port`);
  return { host: addr.slice(0, i).replace(/^\[|\]$/g, ""), port };
}

/** Where to connect to a listener bound to `host` (wildcards mean loopback). */
function connectHost(host: string): string {
  return host === "0.0.0.0" || host === "::" || host === "" ? "127.0.0.1" : host;
}

/** Service addresses from env (*_ADDR, PORT, HOST) with the local defaults. */
export function stackAddrs(env: NodeJS.ProcessEnv = process.env): StackAddrs & { host: string; port: number } {
  const host = env.HOST || "127.0.0.1";
  const port = Number(env.PORT || 8080);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`PORT=${env.PORT} is not a port number`);
  return {
    documents: env.DOCUMENTS_ADDR || DEFAULT_ADDRS.documents,
    sessions: env.SESSIONS_ADDR || DEFAULT_ADDRS.sessions,
    agent: env.AGENT_ADDR || DEFAULT_ADDRS.agent,
    billing: env.BILLING_ADDR || DEFAULT_ADDRS.billing,
    ingest: env.INGEST_ADDR || DEFAULT_ADDRS.ingest,
    gateway: `${host.includes(":") ? `[${host}]` : host}:${port}`,
    host,
    port,
  };
}

/**
 * The environment of a stack on fresh loopback ports: every service's *_ADDR, the gateway's
 * PORT and HOST. Passed in `startStack`'s env, several stacks run side by side (tests, bench).
 */
export async function freeStackEnv(): Promise<Record<string, string>> {
  const addr = async () => `127.0.0.1:${await freePort()}`;
  return {
    DOCUMENTS_ADDR: await addr(),
    SESSIONS_ADDR: await addr(),
    AGENT_ADDR: await addr(),
    BILLING_ADDR: await addr(),
    INGEST_ADDR: await addr(),
    PORT: String(await freePort()),
    HOST: "127.0.0.1",
  };
}

const ADDR_VARIABLE: Record<ServiceName, string> = {
  documents: "DOCUMENTS_ADDR",
  sessions: "SESSIONS_ADDR",
  agent: "AGENT_ADDR",
  billing: "BILLING_ADDR",
  ingest: "INGEST_ADDR",
  gateway: "HOST/PORT",
};

/** Stops service processes a dead supervisor left behind (kill -9), as recorded in its stack.json. */
async function killOrphanedServices(
  info: StackInfo,
  entryOf: (name: ServiceName) => string,
  log: (line: string) => void,
): Promise<void> {
  await Promise.all(
    Object.entries(info.children).map(async ([name, child]) => {
      if (!child || !isAlive(child.pid)) return;
      const now = processStartTime(child.pid);
      const ours =
        child.startTime !== null && now !== null
          ? now === child.startTime
          : (processArgs(child.pid) ?? []).includes(entryOf(name as ServiceName));
      if (!ours) return;
      log(`[supervisor] stopping ${name} (pid ${child.pid}) left running by a previous supervisor`);
      await stopGroup(child.pid, STOP_GRACE_MS);
    }),
  );
}

/**
 * How long a stopping service gets before SIGKILL: its own shutdown deadline (unready window,
 * drain, release) plus a margin, as Kubernetes gives 30 s. A shorter grace cut a draining turn off.
 */
export const STOP_GRACE_MS = SHUTDOWN_DEADLINE_MS + 5_000;

/**
 * SIGTERM to the process group (services run detached, leader = pid), then SIGCONT so a stopped
 * (SIGSTOP, Ctrl-Z) process wakes to handle it, as systemd does; SIGKILL after graceMs.
 */
async function stopGroup(pid: number, graceMs: number): Promise<void> {
  const send = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig);
    } catch {
      signal(pid, sig);
    }
  };
  send("SIGTERM");
  send("SIGCONT");
  if (await waitForExit(pid, graceMs)) return;
  send("SIGKILL");
  await waitForExit(pid, 5_000);
}

const RESTART_WINDOW_MS = 60_000;
const MAX_RESTARTS = 5;

/** One service process, restarted with backoff when it crashes (at most 5 times a minute). */
class Supervised {
  child: ChildProcess | undefined;
  private restarts: number[] = [];
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;
  /** Recent output, for error messages. */
  readonly recent: string[] = [];
  gaveUp = false;

  constructor(
    readonly name: ServiceName,
    private readonly entry: string,
    private readonly nodeArgs: string[],
    private readonly env: NodeJS.ProcessEnv,
    private readonly log: (line: string) => void,
    private readonly onSpawn: () => void,
    private readonly onGiveUp: (name: ServiceName) => void,
  ) {}

  start(): void {
    this.recent.length = 0;
    const child = spawnTied(process.execPath, [...this.nodeArgs, this.entry], {
      cwd: REPO_ROOT,
      env: this.env,
      stdio: ["ignore", "pipe", "pipe"],
      // Own process group: Ctrl-C reaches only the supervisor, which stops services in order.
      detached: true,
      deathSignal: "SIGTERM",
    });
    this.child = child;
    const prefix = `${this.name.padEnd(9)} | `;
    const onLine = (line: string) => {
      this.recent.push(line);
      if (this.recent.length > 20) this.recent.shift();
      this.log(prefix + line);
    };
    forEachLine(child.stdout, onLine);
    forEachLine(child.stderr, onLine);
    child.once("error", (err) => this.log(`[supervisor] could not start ${this.name}: ${err.message}`));
    child.once("exit", (code, sig) => this.exited(child, code, sig));
    this.onSpawn();
  }

  private exited(child: ChildProcess, code: number | null, sig: NodeJS.Signals | null): void {
    if (this.stopping || child !== this.child) return;
    const now = Date.now();
    this.restarts = this.restarts.filter((t) => now - t < RESTART_WINDOW_MS);
    const how = sig ? `signal ${sig}` : `code ${code}`;
    if (this.restarts.length >= MAX_RESTARTS) {
      this.gaveUp = true;
      this.log(
        `[supervisor] ${this.name} exited (${how}) and crashed ${MAX_RESTARTS} times within a minute: not restarting it`,
      );
      this.onGiveUp(this.name);
      return;
    }
    const delay = Math.min(500 * 2 ** this.restarts.length, 10_000);
    this.restarts.push(now);
    this.log(`[supervisor] ${this.name} exited (${how}); restarting in ${delay} ms`);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.stopping) this.start();
    }, delay);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    const child = this.child;
    if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
    const exited = childExited(child);
    await stopGroup(child.pid, STOP_GRACE_MS);
    await exited;
  }
}

/** The stack's log sinks: `log` for supervisor and service lines, `infraLog` for infra output. */
interface StackLogs {
  log: (line: string) => void;
  infraLog: (line: string) => void;
  close(): void;
}

/**
 * Opens the logs: `log` writes to stdout (foreground), opts.log, or logs/stack.log (opened on
 * first use); infra output is chatty, so all of it goes to logs/infra.log and only notable lines
 * also to `log`.
 */
function openStackLogs(dataDir: string, opts: StartStackOptions): StackLogs {
  mkdirSync(join(dataDir, "logs"), { recursive: true });
  let logFile: WriteStream | undefined;
  const log =
    opts.log ??
    (opts.foreground
      ? (line: string) => process.stdout.write(`${line}\n`)
      : (line: string) => {
          logFile ??= openLog(join(dataDir, "logs", "stack.log"));
          logFile.write(`${line}\n`);
        });
  const infraLogFile = openLog(join(dataDir, "logs", "infra.log"));
  const infraLog = (line: string) => {
    infraLogFile.write(`${line}\n`);
    if (
      /\b(ERROR|FATAL|PANIC|WARNING)\b|\[(ERR|WRN|FTL)\]|unexpectedly|previous run|stale|initialised|listening on http/.test(
        line,
      )
    )
      log(line);
  };
  const close = () => {
    infraLogFile.end();
    logFile?.end();
  };
  return { log, infraLog, close };
}

/** The schema of each backend service with its migration list (services/<name>/src/db/migrations.ts). */
const SERVICE_SCHEMAS: Record<BackendName, SchemaSpec> = {
  documents: { schema: documentsSchema.SCHEMA, migrations: documentsSchema.migrations },
  sessions: { schema: sessionsSchema.SCHEMA, migrations: sessionsSchema.migrations },
  billing: { schema: billingSchema.SCHEMA, migrations: billingSchema.migrations },
  ingest: { schema: ingestSchema.SCHEMA, migrations: ingestSchema.migrations },
  agent: { schema: agentSchema.SCHEMA, migrations: agentSchema.migrations },
};

/**
 * Applies every backend's pending migrations on `databaseUrl`, the schemas side by side, as
 * `main.ts migrate` of each service would (in process: no five extra process starts). Services
 * started afterwards find their schema current; runners racing on a schema wait for each other.
 * Throws naming the schema whose migration failed.
 */
export async function migrateServices(databaseUrl: string, log: (line: string) => void): Promise<void> {
  const started = Date.now();
  const results = await Promise.all(
    BACKEND_SERVICES.map(async (name) => {
      const { schema, migrations } = SERVICE_SCHEMAS[name];
      const db = createDb(databaseUrl, schema, 2);
      try {
        return { schema, applied: await migrateLatest(db, schema, migrations) };
      } catch (err) {
        throw new Error(`migrating schema "${schema}" of ${name} failed: ${(err as Error).message}`, { cause: err });
      } finally {
        await db.destroy();
      }
    }),
  );
  const applied = results.filter((r) => r.applied.length > 0).map((r) => `${r.schema} +${r.applied.length}`);
  log(
    `[supervisor] migrations done in ${Date.now() - started} ms (${applied.length > 0 ? `applied: ${applied.join(", ")}` : "every schema up to date"})`,
  );
}

/** Where one service listens, parsed from its address variable. */
type Listener = { name: ServiceName; host: string; port: number };

/** The addresses a stack will use, checked free by preflight. */
interface StackPlan {
  addrs: StackAddrs & { host: string; port: number };
  gatewayUrl: string;
  listeners: Listener[];
}

/**
 * Checks before anything starts: no live stack on dataDir, every service entry file present,
 * every port free. A stack.json left by a supervisor killed with -9 is cleaned up (its orphaned
 * services stopped). Throws naming what is wrong.
 */
async function preflight(
  dataDir: string,
  env: NodeJS.ProcessEnv,
  entryOf: (name: ServiceName) => string,
  log: (line: string) => void,
): Promise<StackPlan> {
  const previous = readStackFile(dataDir);
  if (previous && previous.pid !== process.pid && sameProcess(previous.pid, previous.startTime)) {
    throw new Error(
      `Redline is already running for ${dataDir} (pid ${previous.pid}, ${previous.gatewayUrl}): stop it first`,
    );
  }
  const missing = SERVICE_NAMES.filter((name) => !existsSync(entryOf(name)));
  if (missing.length) {
    throw new Error(
      `cannot start the stack: service entry file(s) not found: ${missing.map((n) => entryOf(n)).join(", ")}`,
    );
  }
  if (previous) {
    await killOrphanedServices(previous, entryOf, log);
    rmSync(join(dataDir, STACK_FILE), { force: true });
  }
  const addrs = stackAddrs(env);
  const gatewayUrl = `http://${connectHost(addrs.host)}:${addrs.port}`;
  const listeners = SERVICE_NAMES.map((name) => ({ name, ...parseAddr(addrs[name], ADDR_VARIABLE[name]) }));
  const busy: string[] = [];
  for (const l of listeners) {
    if (!(await isPortFree(l.port, connectHost(l.host))))
      busy.push(`${l.name} (${ADDR_VARIABLE[l.name]}: ${addrs[l.name]})`);
  }
  if (busy.length) throw new Error(`cannot start the stack: port(s) already in use: ${busy.join(", ")}`);
  return { addrs, gatewayUrl, listeners };
}

/** Writes <dataDir>/stack.json atomically (0600: it carries the object store's secret key and any DATABASE_URL password). */
function writeStackInfo(dataDir: string, info: StackInfo): void {
  const tmp = join(dataDir, `${STACK_FILE}.${process.pid}.tmp`);
  writeFileSync(tmp, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, join(dataDir, STACK_FILE));
}

/** The current pid and start time of each supervised service, for stack.json. */
function childrenOf(services: Map<ServiceName, Supervised>): StackInfo["children"] {
  return Object.fromEntries(
    [...services].flatMap(([name, s]) =>
      s.child?.pid ? [[name, { pid: s.child.pid, startTime: processStartTime(s.child.pid) }]] : [],
    ),
  );
}

/** What waitUntilUp needs: the plan, how to start a service, and which one gave up (if any). */
interface Startup {
  plan: StackPlan;
  services: Map<ServiceName, Supervised>;
  supervise(name: ServiceName): void;
  gaveUp(): ServiceName | undefined;
  healthTimeoutMs: number;
  signal?: AbortSignal;
  log: (line: string) => void;
}

/**
 * Starts the backends and waits until each listens, then the gateway until its /health answers
 * 200, reporting what is not up every 5 s. Throws on timeout (naming what is not up), on a
 * service that keeps crashing (with its last output) and on abort.
 */
async function waitUntilUp(up: Startup): Promise<void> {
  const { plan, log } = up;
  const deadline = Date.now() + up.healthTimeoutMs;
  let lastReport = Date.now();
  const waitFor = async (what: string, ready: () => Promise<boolean>, notUp: () => Promise<string[]>) => {
    for (;;) {
      if (up.signal?.aborted) throw new Error("startup aborted");
      const gaveUp = up.gaveUp();
      if (gaveUp) {
        const s = up.services.get(gaveUp);
        throw new Error(`${gaveUp} keeps crashing; its last output:\n${s?.recent.join("\n") ?? ""}`);
      }
      if (await ready()) return;
      if (Date.now() > deadline)
        throw new Error(
          `timed out after ${up.healthTimeoutMs / 1000} s waiting for ${what}; not up: ${(await notUp()).join(", ")}`,
        );
      if (Date.now() - lastReport >= 5_000) {
        lastReport = Date.now();
        log(`[supervisor] waiting for: ${(await notUp()).join(", ")}`);
      }
      await sleep(200);
    }
  };
  const backendsNotUp = async () => {
    const down: string[] = [];
    for (const l of plan.listeners) {
      if (l.name === "gateway") continue;
      if (!(await canConnect(l.port, connectHost(l.host))))
        down.push(`${l.name} (${plan.addrs[l.name]} not listening)`);
    }
    return down;
  };

  if (up.signal?.aborted) throw new Error("startup aborted");
  for (const name of BACKEND_SERVICES) up.supervise(name);
  await waitFor("the services", async () => (await backendsNotUp()).length === 0, backendsNotUp);
  up.supervise("gateway");
  let lastHealth: number | string = "no answer";
  await waitFor(
    "the gateway",
    async () => {
      lastHealth = await healthStatus(plan.gatewayUrl);
      return lastHealth === 200;
    },
    async () => [`gateway (${plan.gatewayUrl}/health: ${lastHealth})`, ...(await backendsNotUp())],
  );
}

/** The environment of every service process: infra URLs and each service's address. */
function serviceEnv(env: NodeJS.ProcessEnv, infra: LocalInfra, addrs: StackPlan["addrs"]): NodeJS.ProcessEnv {
  return {
    ...env,
    ...infraEnv(infra),
    DOCUMENTS_ADDR: addrs.documents,
    SESSIONS_ADDR: addrs.sessions,
    AGENT_ADDR: addrs.agent,
    BILLING_ADDR: addrs.billing,
    INGEST_ADDR: addrs.ingest,
    PORT: String(addrs.port),
    HOST: addrs.host,
  };
}

/**
 * The metrics address of each service: a free loopback port each, fixed for the stack's life
 * (a restarted service binds the same one, so scrapers keep finding it); none with METRICS_ADDR=off.
 */
async function metricsAddrs(env: NodeJS.ProcessEnv): Promise<Partial<StackAddrs>> {
  if (env.METRICS_ADDR?.trim().toLowerCase() === "off") return {};
  const ports = await Promise.all(SERVICE_NAMES.map(() => freePort()));
  return Object.fromEntries(SERVICE_NAMES.map((name, i) => [name, `127.0.0.1:${ports[i]}`]));
}

/** A stack being started or running: what stack.json records and stopAll stops. */
interface StackRun {
  dataDir: string;
  plan: StackPlan;
  metrics: Partial<StackAddrs>;
  infra: LocalInfra;
  services: Map<ServiceName, Supervised>;
  supervisorStart: number | null;
  startedAt: number;
}

/** The contents of stack.json for `run` in `status`. */
function stackInfo(run: StackRun, status: StackInfo["status"]): StackInfo {
  const { addrs, gatewayUrl } = run.plan;
  return {
    pid: process.pid,
    startTime: run.supervisorStart,
    status,
    gatewayUrl,
    databaseUrl: run.infra.databaseUrl,
    natsUrl: run.infra.natsUrl,
    s3: run.infra.s3,
    addrs: {
      documents: addrs.documents,
      sessions: addrs.sessions,
      agent: addrs.agent,
      billing: addrs.billing,
      ingest: addrs.ingest,
      gateway: addrs.gateway,
    },
    metrics: run.metrics,
    children: childrenOf(run.services),
    dataDir: run.dataDir,
    startedAt: new Date(run.startedAt).toISOString(),
  };
}

/**
 * Stops the gateway, then the backends (`servicesStopped` runs then: stack.json is no longer
 * rewritten), then infra; removes stack.json when it is this supervisor's and closes the logs.
 */
async function stopAll(run: StackRun, logs: StackLogs, servicesStopped: () => void): Promise<void> {
  const { services } = run;
  const { log } = logs;
  log("[supervisor] stopping");
  await services.get("gateway")?.stop();
  await Promise.all(BACKEND_SERVICES.map((name) => services.get(name)?.stop()));
  servicesStopped();
  try {
    await run.infra.stop();
  } finally {
    const current = readStackFile(run.dataDir);
    if (current?.pid === process.pid) rmSync(join(run.dataDir, STACK_FILE), { force: true });
    log("[supervisor] stopped");
    logs.close();
  }
}

/**
 * Starts infra (persistent ports 8432/8422/8439 unless DATABASE_URL, NATS_URL, S3_ENDPOINT
 * point elsewhere), applies every service's migrations (migrateServices), then starts documents,
 * sessions, billing, ingest and agent, then the gateway, and resolves once GET
 * <gatewayUrl>/health answers 200. Writes <dataDir>/stack.json meanwhile.
 * Cleans up after a supervisor killed with -9 (orphaned services and servers).
 * Errors: a stack already running on dataDir, missing service entry files, ports in use, a
 * failed migration (naming the schema), a service not coming up within healthTimeoutMs (naming
 * which), abort; all started parts are stopped.
 */
export async function startStack(opts: StartStackOptions = {}): Promise<RunningStack> {
  const env = opts.env ?? process.env;
  const dataDir = resolve(opts.dataDir ?? defaultDataDir(env));
  // REDLINE_SERVICES_ROOT (testing only) replaces the repo root as the place of services/<name>/src/main.ts.
  const servicesRoot = env.REDLINE_SERVICES_ROOT ? resolve(env.REDLINE_SERVICES_ROOT) : REPO_ROOT;
  const runtime = opts.runtime ?? "tsx";
  const entryFile = runtime === "dist" ? ["dist", "main.js"] : ["src", "main.ts"];
  const entryOf = opts.serviceEntry ?? ((name: ServiceName) => join(servicesRoot, "services", name, ...entryFile));
  const logs = openStackLogs(dataDir, opts);
  const { log } = logs;

  let plan: StackPlan;
  let infra: LocalInfra;
  let startedAt = Date.now();
  try {
    plan = await preflight(dataDir, env, entryOf, log);
    log(`[supervisor] data in ${dataDir}; starting infra`);
    startedAt = Date.now();
    infra = await startLocalInfra({ dataDir, env, persistent: true, log: logs.infraLog });
  } catch (err) {
    logs.close();
    throw err;
  }
  const embedded = Object.entries(infra.embedded).map(([k, v]) => `${k} ${v ? "embedded" : "external"}`);
  log(`[supervisor] infra up in ${Date.now() - startedAt} ms (${embedded.join(", ")})`);

  const { addrs, gatewayUrl } = plan;
  const services = new Map<ServiceName, Supervised>();
  const metrics = await metricsAddrs(env);
  const run: StackRun = {
    dataDir,
    plan,
    metrics,
    infra,
    services,
    supervisorStart: processStartTime(process.pid),
    startedAt,
  };
  const info = (status: StackInfo["status"]) => stackInfo(run, status);
  let status: StackInfo["status"] = "starting";
  let stopped = false;
  const writeStackFile = () => {
    if (!stopped) writeStackInfo(dataDir, info(status));
  };
  writeStackFile();

  const childEnv = runtimeEnv(serviceEnv(env, infra, addrs), runtime);
  let gaveUp: ServiceName | undefined;
  const supervise = (name: ServiceName) => {
    const env = { ...childEnv, METRICS_ADDR: metrics[name] ?? "off" };
    const s = new Supervised(name, entryOf(name), RUNTIME_ARGS[runtime], env, log, writeStackFile, (n) => {
      gaveUp ??= n;
    });
    services.set(name, s);
    s.start();
  };

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= stopAll(run, logs, () => {
      stopped = true;
    });
    return stopping;
  };

  try {
    // Services do not migrate at start (they refuse a schema missing migrations): the migrations run here, once.
    if (opts.migrate ?? !opts.serviceEntry) await migrateServices(infra.databaseUrl, log);
    const healthTimeoutMs = opts.healthTimeoutMs ?? 60_000;
    await waitUntilUp({ plan, services, supervise, gaveUp: () => gaveUp, healthTimeoutMs, signal: opts.signal, log });
  } catch (err) {
    log(`[supervisor] startup failed: ${(err as Error).message}`);
    await stop().catch(() => {});
    throw err;
  }

  status = "up";
  writeStackFile();
  log(`[supervisor] all services up in ${Date.now() - startedAt} ms`);
  const result = info("up");
  return {
    pid: result.pid,
    gatewayUrl,
    databaseUrl: result.databaseUrl,
    natsUrl: result.natsUrl,
    s3: result.s3,
    addrs: result.addrs,
    metrics: result.metrics,
    dataDir,
    stop,
  };
}
