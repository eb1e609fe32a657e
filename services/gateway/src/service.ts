// The gateway as a library: startGateway builds the context and app from a config and listens;
// tests boot it in-process on port 0. close() is the graceful stop main.ts runs on SIGTERM.
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { type CloseOptions, type Stoppable, startMetricsServer } from "@redline/service-kit";
import { createApp } from "./app.js";
import { type GatewayConfig, httpServerTimeouts } from "./config.js";
import { createContext, type GatewayContext } from "./context.js";
import { onClientError } from "./error-handler.js";

/** A running gateway. */
export interface RunningGateway extends Stoppable {
  /** Base URL, e.g. http://127.0.0.1:8080 (no trailing slash). */
  url: string;
  port: number;
  /** Where GET /metrics answers (host:port), when cfg.metricsAddr is set (not "off"). */
  metricsAddress?: string;
}

/** Default time requests in flight get to finish on close (library use and tests). */
const DEFAULT_DRAIN_MS = 10_000;

/** Liveness and readiness: both answer 503 from the first moment of a stop, so balancers leave at once. */
const PROBE_PATHS = new Set(["/health", "/ready"]);

/** What GET /health and GET /ready answer while the gateway stops (HealthResponse: the gateway itself is failing). */
const STOPPING_HEALTH = JSON.stringify({ status: "unhealthy", failing: ["gateway"] });

/**
 * Starts the HTTP gateway on cfg.host:cfg.port; `overrides` replace context members (tests).
 *
 * close(): GET /health and GET /ready answer 503 at once while other requests are still served for
 * `unreadyMs` (default 0), so balancers stop routing here; then the listener closes, progress
 * streams end (their clients reconnect elsewhere with Last-Event-ID), every response carries
 * `Connection: close`, and requests in flight get `drainMs` (default 10 s) before their
 * connections are cut; then the gRPC clients close. A second close() waits for the first.
 */
export async function startGateway(
  cfg: GatewayConfig,
  overrides: Partial<GatewayContext> = {},
): Promise<RunningGateway> {
  const stopping = new AbortController();
  const ctx = createContext(cfg, { stopping: stopping.signal, ...overrides });
  const app = createApp(ctx, cfg);
  let unready = false;
  let draining = false;
  const open = new Set<ServerResponse>();
  // Node checks these limits on a timer (default every 30 s); a tenth of the request limit keeps
  // the cut-off close to the documented time without scanning connections too often.
  const { requestTimeout, headersTimeout, keepAliveTimeout } = httpServerTimeouts(cfg);
  const serverOptions = {
    requestTimeout,
    headersTimeout,
    connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(requestTimeout / 10))),
  };
  const server = createServer(serverOptions, (req, res) => {
    if (unready && req.method === "GET" && PROBE_PATHS.has(req.url?.split("?")[0] ?? "")) {
      res.writeHead(503, { "Content-Type": "application/json; charset=utf-8", Connection: "close" });
      res.end(STOPPING_HEALTH);
      return;
    }
    open.add(res);
    if (draining) res.setHeader("Connection", "close");
    res.on("close", () => {
      open.delete(res);
      // A keep-alive connection whose last response just ended is idle now: close it.
      if (draining) server.closeIdleConnections();
    });
    app(req, res);
  });
  // Idle keep-alive sockets outlive the proxy's and client pools' (config.ts keepAliveTimeoutMs).
  server.keepAliveTimeout = keepAliveTimeout;
  server.on("clientError", onClientError);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(cfg.port, cfg.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (err) {
    ctx.close();
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  const host = cfg.host.includes(":") ? `[${cfg.host}]` : cfg.host;
  const url = `http://${host}:${port}`;
  ctx.log.info({ url, port }, "listening");
  const metrics = cfg.metricsAddr
    ? await startMetricsServer(cfg.metricsAddr, ctx.log).catch(async (err) => {
        server.close();
        ctx.close();
        throw err;
      })
    : null;

  const shutdown = async ({ unreadyMs = 0, drainMs = DEFAULT_DRAIN_MS }: CloseOptions) => {
    const started = Date.now();
    unready = true;
    ctx.log.info({ unreadyMs }, "gateway stopping: /health and /ready answer 503");
    if (unreadyMs > 0) await sleep(unreadyMs);
    draining = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const res of open) if (!res.headersSent) res.setHeader("Connection", "close");
    // Progress streams end now (each finishes the event it is writing); their clients resume elsewhere.
    stopping.abort();
    server.closeIdleConnections();
    ctx.log.info(
      { inFlight: open.size, drainMs },
      `gateway no longer accepts connections; draining ${open.size} requests`,
    );
    let timer: NodeJS.Timeout | undefined;
    const cut = new Promise<"cut">((resolve) => {
      timer = setTimeout(() => resolve("cut"), drainMs);
    });
    if ((await Promise.race([closed, cut])) === "cut") {
      ctx.log.warn({ inFlight: open.size, drainMs }, `requests still running after ${drainMs} ms: connections cut`);
      server.closeAllConnections();
      await closed;
    }
    clearTimeout(timer);
    ctx.close();
    await metrics?.close();
    ctx.log.info({ ms: Date.now() - started }, "gateway stopped");
  };
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    ...(metrics && { metricsAddress: metrics.address }),
    close(opts = {}) {
      closing ??= shutdown(opts);
      return closing;
    },
  };
}
