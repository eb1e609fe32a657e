// Prometheus metrics, once for every service: one registry per process, get-or-create metric
// helpers (several services share a process in tests, so a metric may be asked for twice), the
// per-RPC server metrics, gauges computed on scrape, and the /metrics listener on a port of its
// own (never the API port, so exposing the API never exposes internals and scrapes never queue
// behind API traffic).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { constants, type PerformanceEntry, PerformanceObserver } from "node:perf_hooks";
import { getHeapStatistics } from "node:v8";
import { status as GrpcStatus } from "@grpc/grpc-js";
import client from "prom-client";
import type { Logger } from "./logger.js";

/** The process's one registry: every metric of every service in this process. */
export const metricsRegistry = new client.Registry();

/** Prefix of every Redline metric. */
export const METRICS_PREFIX = "redline_";

/** Latency buckets in seconds, from a cached read (1 ms) to a long model turn (60 s). */
export const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** Interval of the event loop delay samples behind nodejs_eventloop_lag_*, in ms. */
const EVENT_LOOP_SAMPLE_MS = 100;

let enabled = true;
let defaultsCollected = false;

/** True unless metrics were switched off (METRICS_ADDR=off); the per-request hooks then record nothing. */
export function metricsEnabled(): boolean {
  return enabled;
}

/**
 * Switches the per-request hooks (RPC and HTTP metrics) off (false) or back on (true) in this
 * process, the collectors staying as they are. For an A/B measurement inside one process (pnpm
 * bench o), as setTracingRecording.
 */
export function setMetricsRecording(on: boolean): void {
  enabled = on;
}

/** `METRICS_ADDR` as read by every service's config: host:port, or undefined when unset; "off" stays "off". */
export function readMetricsAddr(env: Record<string, string | undefined>): string | undefined {
  const v = env.METRICS_ADDR?.trim();
  return v ? v : undefined;
}

function existing<T>(name: string): T | undefined {
  return metricsRegistry.getSingleMetric(name) as T | undefined;
}

/** The counter `name` of the process registry, created on first use. */
export function counter<L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[] = [],
): client.Counter<L> {
  return (
    existing<client.Counter<L>>(name) ?? new client.Counter({ name, help, labelNames, registers: [metricsRegistry] })
  );
}

/** The histogram `name` of the process registry (seconds by default), created on first use. */
export function histogram<L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[] = [],
  buckets: number[] = LATENCY_BUCKETS,
): client.Histogram<L> {
  return (
    existing<client.Histogram<L>>(name) ??
    new client.Histogram({ name, help, labelNames, buckets, registers: [metricsRegistry] })
  );
}

/**
 * Fills a scrape-time gauge: `add(labels, value)` per series. Values of the same series add up,
 * so two pools of one schema in a process (tests) report their sum.
 */
export type GaugeSource<L extends string> = (
  add: (labels: Partial<Record<L, string>>, value: number) => void,
) => Promise<void> | void;

const gaugeSources = new Map<string, Set<GaugeSource<string>>>();

/**
 * A gauge computed when scraped (a cheap query, a pool's counters), not on every event: adds
 * `source` to the gauge `name` (created on first use) and returns a function removing it again
 * (call it when the service closes, so a closed pool is not read). Several sources (several
 * services in one process) each set their own series; a failing source leaves its series out
 * rather than failing the scrape.
 */
export function gaugeOnScrape<L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[],
  source: GaugeSource<L>,
): () => void {
  let sources = gaugeSources.get(name);
  if (!sources) {
    const set = new Set<GaugeSource<string>>();
    sources = set;
    gaugeSources.set(name, set);
    new client.Gauge({
      name,
      help,
      labelNames,
      registers: [metricsRegistry],
      async collect() {
        this.reset();
        await Promise.all(
          [...set].map(async (s) => {
            try {
              await s((labels, value) => this.inc(labels as Partial<Record<L, string>>, value));
            } catch {
              // A dependency down at scrape time: its gauge is absent; /ready and the logs say why.
            }
          }),
        );
      },
    });
  }
  sources.add(source as GaugeSource<string>);
  const mine = sources;
  return () => {
    mine.delete(source as GaugeSource<string>);
  };
}

/** A gauge's name and help text. */
export interface GaugeName {
  name: string;
  help: string;
}

/**
 * A backlog's two scrape-time gauges, fed by one `query` (a row count and the age in seconds of
 * the oldest, null when none): `count`, and `age` (0 when none). The scrape reads them one after
 * the other, within milliseconds, so they share the query's answer until the next tick. Returns
 * the function removing both.
 */
export function backlogGaugesOnScrape(
  query: () => Promise<{ count: number; age: number | null }>,
  count: GaugeName,
  age: GaugeName,
): () => void {
  let pending: Promise<{ count: number; age: number }> | undefined;
  const read = () => {
    pending ??= query()
      .then((r) => ({ count: r.count, age: Math.max(0, r.age ?? 0) }))
      .finally(() => {
        setImmediate(() => {
          pending = undefined;
        });
      });
    return pending;
  };
  const stops = [
    gaugeOnScrape(count.name, count.help, [], async (add) => add({}, (await read()).count)),
    gaugeOnScrape(age.name, age.help, [], async (add) => add({}, (await read()).age)),
  ];
  return () => {
    for (const stop of stops) stop();
  };
}

const GRPC_CODE_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(GrpcStatus)
    .filter(([, v]) => typeof v === "number")
    .map(([k, v]) => [v as number, k]),
);

/** "/redline.documents.v1.DocumentsService/GetDocument" → service and method labels. */
export function splitGrpcPath(path: string): { grpc_service: string; grpc_method: string } {
  const [, service = "unknown", method = "unknown"] = path.split("/");
  return { grpc_service: service, grpc_method: method };
}

/** The name of a gRPC status code ("OK", "NOT_FOUND", ...); the number itself for an unknown one. */
export function grpcCodeName(code: number): string {
  return GRPC_CODE_NAMES[code] ?? String(code);
}

/**
 * The server metrics of the RPC `path` (the method's full path): the returned function counts one
 * answered call in redline_grpc_server_handled_total{grpc_service,grpc_method,grpc_code} (`code`,
 * the gRPC status the caller got) and its duration (`seconds`, arrival to answer) in
 * redline_grpc_server_handling_seconds{grpc_service,grpc_method}. Called by the server's own
 * wrapper of each handler (rpc.ts), which checks metricsEnabled() first.
 */
export function rpcServerMetrics(path: string): (seconds: number, code: number) => void {
  const labels = splitGrpcPath(path);
  const handled = counter(
    `${METRICS_PREFIX}grpc_server_handled_total`,
    "RPCs completed on the server, by method and gRPC status code.",
    ["grpc_service", "grpc_method", "grpc_code"],
  );
  const seconds = histogram(
    `${METRICS_PREFIX}grpc_server_handling_seconds`,
    "Time from an RPC's arrival to its answer, by method.",
    ["grpc_service", "grpc_method"],
  );
  // Each series is resolved once (per method here, per method and code on first use), not on
  // every call: a labels object spread per call ({...labels, grpc_code}) cost 1.7 µs against 0.3.
  const timer = seconds.labels(labels);
  const handledByCode = new Map<number, client.Counter.Internal>();
  return (elapsed, code) => {
    timer.observe(elapsed);
    let series = handledByCode.get(code);
    if (!series) {
      series = handled.labels({ ...labels, grpc_code: grpcCodeName(code) });
      handledByCode.set(code, series);
    }
    series.inc();
  };
}

/**
 * redline_nodejs_heap_used_after_major_gc_bytes: V8's heap in use read just after each full
 * (mark-compact) collection; 0 until the first one. The heap in use at any other time
 * counts garbage V8 has not collected yet, which grows for minutes as V8 widens its limits, and
 * RSS keeps the pages V8 took; this is what a leak raises and V8's sizing does not (pnpm soak).
 */
function heapAfterMajorGc(): void {
  const gauge = new client.Gauge({
    name: `${METRICS_PREFIX}nodejs_heap_used_after_major_gc_bytes`,
    help: "V8 heap in use right after the last full (mark-compact) garbage collection, in bytes.",
    registers: [metricsRegistry],
  });
  // The observer runs shortly after the collection: what was allocated in between is noise.
  const observer = new PerformanceObserver((list) => {
    const major = (e: PerformanceEntry) =>
      (e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR;
    if (list.getEntries().some(major)) gauge.set(getHeapStatistics().used_heap_size);
  });
  observer.observe({ entryTypes: ["gc"] });
}

/** A running /metrics listener. */
export interface MetricsServer {
  /** host:port it listens on (the bound port when asked for 0). */
  address: string;
  close(): Promise<void>;
}

/**
 * Serves the registry's Prometheus text on `GET /metrics` at `addr` (host:port; port 0 picks
 * one), with Node's runtime metrics (collectDefaultMetrics, once per process). `addr` "off"
 * switches the per-request hooks off and listens nowhere (resolves null): the "metrics off" side
 * of the benchmark.
 */
export async function startMetricsServer(addr: string, log: Logger): Promise<MetricsServer | null> {
  if (addr.toLowerCase() === "off") {
    enabled = false;
    return null;
  }
  if (!defaultsCollected) {
    defaultsCollected = true;
    // The event loop delay is sampled every 100 ms, not prom-client's 10: each sample wakes an idle
    // process (about 35 µs of CPU), 1.8 ms a second at 50 ms and 0.9 at 100; 150 samples still
    // stand behind the lag percentiles of a 15 s scrape, and a stall longer than 100 ms shows whole.
    client.collectDefaultMetrics({
      register: metricsRegistry,
      prefix: METRICS_PREFIX,
      eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS,
    });
    heapAfterMajorGc();
  }
  const i = addr.lastIndexOf(":");
  const host = addr.slice(0, i).replace(/^\[|\]$/g, "");
  const port = Number(addr.slice(i + 1));
  if (i <= 0 || !Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`METRICS_ADDR must be host:port or "off", got "${addr}"`);
  const server: Server = createServer(async (req, res) => {
    if (req.method !== "GET" || req.url?.split("?")[0] !== "/metrics") {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("not found: GET /metrics\n");
      return;
    }
    try {
      const body = await metricsRegistry.metrics();
      res.writeHead(200, { "Content-Type": metricsRegistry.contentType }).end(body);
    } catch (err) {
      log.error({ err }, "metrics: collecting failed");
      res.writeHead(500, { "Content-Type": "text/plain" }).end("collecting metrics failed\n");
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  const address = `${host.includes(":") ? `[${host}]` : host}:${bound}`;
  log.info({ metrics: address }, "metrics on GET /metrics");
  return {
    address,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
