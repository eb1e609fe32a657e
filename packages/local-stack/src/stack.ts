// The local Redline stack: embedded infra (or external via env) plus the six services as
// separate child processes, supervised (prefixed logs, restart with backoff, ordered stop).
// Used by `pnpm start` (runForeground), by scripts such as demo.ts (background), benches and tests.
import { existsSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  canConnect,
  freePort,
  infraEnv,
  isAlive,
  isPortFree,
  type LocalInfra,
  processArgs,
  processStartTime,
  startLocalInfra,
} from "@redline/local-infra";
import { ADDR_VARIABLE, connectHost, parseAddr, type StackAddrs, stackAddrs } from "./addrs.js";
import { openStackLogs, type StackLogs } from "./logs.js";
import { migrateServices, serviceSchemas } from "./migrate.js";
import {
  BACKEND_SERVICES,
  REPO_ROOT,
  RUNTIME_ARGS,
  runtimeEnv,
  SERVICE_NAMES,
  type ServiceName,
  type StackRuntime,
} from "./names.js";
import {
  defaultDataDir,
  healthStatus,
  readStackFile,
  STACK_FILE,
  type StackInfo,
  sameProcess,
  writeStackInfo,
} from "./stack-file.js";
import { STOP_GRACE_MS, Supervised, stopGroup } from "./supervised.js";

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
  /**
   * Aborting it stops the stack now: every service's process group is SIGKILLed (no drain) and
   * the infrastructure stopped, during startup or after. For an impatient second Ctrl-C.
   */
  killSignal?: AbortSignal;
}

export interface RunningStack extends Omit<StackInfo, "children" | "status" | "startTime" | "startedAt"> {
  /**
   * Stops gateway, then services (SIGTERM, SIGKILL after STOP_GRACE_MS), then infra; removes
   * stack.json. Idempotent.
   */
  stop(): Promise<void>;
}

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
  const migrate = opts.migrate ?? !opts.serviceEntry;
  // Loads the services' migration lists while the infrastructure starts.
  if (migrate) serviceSchemas().catch(() => {});

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
    const s = new Supervised({
      name,
      entry: entryOf(name),
      nodeArgs: RUNTIME_ARGS[runtime],
      env,
      log,
      onSpawn: writeStackFile,
      onGiveUp: (n) => {
        gaveUp ??= n;
      },
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
  const kill = () => {
    log("[supervisor] stopping now: killing the services");
    for (const s of services.values()) s.kill();
    stop().catch(() => {});
  };
  if (opts.killSignal?.aborted) kill();
  else opts.killSignal?.addEventListener("abort", kill, { once: true });

  try {
    // Services do not migrate at start (they refuse a schema missing migrations): the migrations run here, once.
    if (migrate) await migrateServices(infra.databaseUrl, log);
    if (opts.killSignal?.aborted) throw new Error("startup aborted");
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
