// The common tail of every service's start<Name>Service: bind the RPC files, serve them plus the
// standard health service, log the address, and close in order: report NOT_SERVING, stop
// background work, stop accepting and drain the RPCs in flight, then release the context.
import { setTimeout as sleep } from "node:timers/promises";
import { type HealthCheck, healthService } from "./health.js";
import type { Logger } from "./logger.js";
import { startMetricsServer } from "./metrics.js";
import { bindRpcFiles, DEFAULT_DRAIN_MS, type ServiceDef, startGrpcServer } from "./rpc.js";
import type { CloseOptions, Stoppable } from "./shutdown.js";

/** A started service: its bound gRPC address (host:port) and an idempotent close. */
export interface RunningService extends Stoppable {
  address: string;
  /** Where GET /metrics answers (host:port), when the service was given a metrics address. */
  metricsAddress?: string;
}

/** Options of a service's start<Name>Service(cfg, opts). */
export interface StartOptions {
  /**
   * Apply the schema's pending migrations at start: true by default (tests, benchmarks, tools);
   * main.ts passes false, since in production the `migrate` command owns the schema and main.ts
   * has checked it is current.
   */
  migrate?: boolean;
}

/** A folder of RPC files and the proto services whose methods it holds, one file per method. */
export interface RpcFiles {
  dir: URL;
  definitions: ServiceDef[];
}

/** What serveService needs besides the name, address and context. */
export interface ServeOptions {
  /**
   * The folder of the service's RPC files (`new URL("./rpc/", import.meta.url)`) and the proto
   * services they serve; a list when each proto service has its own folder (billing's rpc/accounts/,
   * rpc/billing/, rpc/edge-policy/).
   */
  rpc: RpcFiles | RpcFiles[];
  /** Probes for grpc.health.v1 (e.g. `{postgres: () => pingDb(db)}`). */
  health: Record<string, HealthCheck>;
  /**
   * Stops background work as soon as shutdown begins, alongside the RPC drain (the agent's job
   * workers hand their jobs back); release waits for it.
   */
  stop?(): Promise<void>;
  /** Releases the context (pools, connections, loops); runs after the server stopped. */
  release(): Promise<void>;
  /**
   * METRICS_ADDR: serve GET /metrics on this host:port (port 0 picks one), "off" to record
   * nothing; absent (library use, tests): metrics are recorded but not served.
   */
  metrics?: string;
}

/**
 * Serves every RPC of `opts.rpc`'s definitions from its file (bindRpcFiles, handed `ctx`) and
 * grpc.health.v1 on `address` (host:port; port 0 picks one). Throws, naming the file, when an
 * RPC has no file.
 *
 * close(): health answers NOT_SERVING from the first moment and `stop` starts; after
 * `unreadyMs` (default 0) the server stops accepting and in-flight calls get `drainMs` (default
 * 5 s) before they are cancelled; then `release`. A second close() waits for the first.
 */
export async function serveService<Ctx extends { log: Logger }>(
  name: string,
  address: string,
  ctx: Ctx,
  opts: ServeOptions,
): Promise<RunningService> {
  const groups = Array.isArray(opts.rpc) ? opts.rpc : [opts.rpc];
  const services = (await Promise.all(groups.map((g) => bindRpcFiles(ctx, g.dir, g.definitions)))).flat();
  let stopping = false;
  const metrics = opts.metrics ? await startMetricsServer(opts.metrics, ctx.log) : null;
  const server = await startGrpcServer(
    address,
    [...services, healthService(opts.health, () => stopping)],
    ctx.log,
  ).catch(async (err) => {
    await metrics?.close();
    throw err;
  });
  ctx.log.info({ address: server.address }, `${name} listening`);
  const shutdown = async ({ unreadyMs = 0, drainMs = DEFAULT_DRAIN_MS }: CloseOptions) => {
    const started = Date.now();
    stopping = true;
    ctx.log.info({ unreadyMs }, `${name} stopping: health NOT_SERVING`);
    const background = (opts.stop?.() ?? Promise.resolve()).catch((err) =>
      ctx.log.error({ err }, `${name}: stopping background work failed`),
    );
    if (unreadyMs > 0) await sleep(unreadyMs);
    const inFlight = server.inFlight();
    ctx.log.info({ inFlight, drainMs }, `${name} no longer accepts RPCs; draining ${inFlight} in flight`);
    if ((await server.close(drainMs)) === "forced") {
      ctx.log.warn(
        { inFlight: server.inFlight(), drainMs },
        `${name}: RPCs still running after ${drainMs} ms cancelled`,
      );
    }
    await background;
    await opts.release();
    // Last, so the drain itself can be watched.
    await metrics?.close();
    ctx.log.info({ ms: Date.now() - started }, `${name} stopped`);
  };
  let closing: Promise<void> | undefined;
  return {
    address: server.address,
    ...(metrics && { metricsAddress: metrics.address }),
    close(closeOpts = {}) {
      closing ??= shutdown(closeOpts);
      return closing;
    },
  };
}
