// The one place that wires the gateway's dependencies: a typed gRPC client per service, a health
// client per service, and the logger. Routes receive this object; tests may pass overrides.
import { healthV1 } from "@redline/grpc-stubs";
import {
  type Clients,
  closeClients,
  createClients,
  createLogger,
  createRpcClient,
  gaugeOnScrape,
  type Logger,
  METRICS_PREFIX,
  type RpcClient,
  type ServiceAddrs,
} from "@redline/service-kit";
import type { GatewayConfig } from "./config.js";
import { createJobEventFeed, type JobEventFeed } from "./job-events.js";

/** The services whose health /health reports, in report order. */
export const SERVICE_NAMES = ["agent", "billing", "documents", "ingest", "sessions"] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number] & keyof ServiceAddrs;

/** The services the gateway calls (names of SERVICE_CLIENTS). */
const CLIENTS = [
  "accounts",
  "billing",
  "edgePolicy",
  "agent",
  "jobs",
  "revert",
  "sessions",
  "documents",
  "library",
  "workspace",
  "ingest",
  "files",
  "webhooks",
] as const;

/** Everything a route handler may use: the clients of CLIENTS and the members below. */
export interface GatewayContext extends Clients<(typeof CLIENTS)[number]> {
  cfg: GatewayConfig;
  log: Logger;
  /** Live job events from NATS, for progress streams. */
  jobEvents: JobEventFeed;
  /** grpc.health.v1 clients, one per service. */
  health: Record<ServiceName, RpcClient<typeof healthV1.HealthService>>;
  /**
   * Aborted when the gateway stops accepting connections (service.ts close): long-lived
   * responses (progress streams) end on it so their clients reconnect to another instance.
   */
  stopping: AbortSignal;
  /** Progress streams open now (redline_gateway_progress_streams_open); streams count themselves in and out. */
  openStreams: { count: number };
  /** Closes every client. */
  close(): void;
}

/** Builds the context from config; `overrides` replace individual members (tests). */
export function createContext(cfg: GatewayConfig, overrides: Partial<GatewayContext> = {}): GatewayContext {
  const log = overrides.log ?? createLogger("gateway", cfg.logLevel);
  const jobEvents = overrides.jobEvents ?? createJobEventFeed(cfg.natsUrl, log);
  const health =
    overrides.health ??
    (Object.fromEntries(
      SERVICE_NAMES.map((name) => [name, createRpcClient(healthV1.HealthService, cfg.addrs[name])]),
    ) as Record<ServiceName, RpcClient<typeof healthV1.HealthService>>);
  const clients = createClients(cfg.addrs, CLIENTS, overrides);
  const openStreams = { count: 0 };
  // Open streams and their subscriptions, so a leak (a dropped client whose stream lives on) shows.
  const stopGauges = [
    gaugeOnScrape(
      `${METRICS_PREFIX}gateway_progress_streams_open`,
      "Progress streams (GET /v1/chat/{session_id}/stream) open now.",
      [],
      (add) => add({}, openStreams.count),
    ),
    gaugeOnScrape(
      `${METRICS_PREFIX}gateway_job_event_subscriptions`,
      "NATS job-event subscriptions the gateway's progress streams hold now.",
      [],
      (add) => add({}, jobEvents.subscriptions),
    ),
  ];
  return {
    cfg,
    log,
    ...clients,
    jobEvents,
    health,
    stopping: overrides.stopping ?? new AbortController().signal,
    openStreams,
    close() {
      for (const stop of stopGauges) stop();
      void jobEvents.close();
      closeClients(CLIENTS, clients);
      for (const client of Object.values(health)) client.close();
    },
  };
}
