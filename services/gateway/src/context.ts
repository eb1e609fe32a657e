// The one place that wires the gateway's dependencies: a typed gRPC client per service, a health
// client per service, and the logger. Routes receive this object; tests may pass overrides.
import { agentV1, billingV1, documentsV1, healthV1, sessionsV1 } from "@redline/grpc-stubs";
import { createLogger, createRpcClient, type Logger, type RpcClient, type ServiceAddrs } from "@redline/service-kit";
import type { GatewayConfig } from "./config.js";

/** The services whose health /health reports, in report order. */
export const SERVICE_NAMES = ["agent", "billing", "documents", "ingest", "sessions"] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number] & keyof ServiceAddrs;

/** Everything a route handler may use. */
export interface GatewayContext {
  cfg: GatewayConfig;
  log: Logger;
  billing: RpcClient<typeof billingV1.BillingServiceService>;
  agent: RpcClient<typeof agentV1.AgentServiceService>;
  sessions: RpcClient<typeof sessionsV1.SessionsServiceService>;
  documents: RpcClient<typeof documentsV1.DocumentsServiceService>;
  /** grpc.health.v1 clients, one per service. */
  health: Record<ServiceName, RpcClient<typeof healthV1.HealthService>>;
  /** Closes every client. */
  close(): void;
}

/** Builds the context from config; `overrides` replace individual members (tests). */
export function createContext(cfg: GatewayConfig, overrides: Partial<GatewayContext> = {}): GatewayContext {
  const log = overrides.log ?? createLogger("gateway", cfg.logLevel);
  const billing = overrides.billing ?? createRpcClient(billingV1.BillingServiceService, cfg.addrs.billing);
  const agent = overrides.agent ?? createRpcClient(agentV1.AgentServiceService, cfg.addrs.agent);
  const sessions = overrides.sessions ?? createRpcClient(sessionsV1.SessionsServiceService, cfg.addrs.sessions);
  const documents = overrides.documents ?? createRpcClient(documentsV1.DocumentsServiceService, cfg.addrs.documents);
  const health =
    overrides.health ??
    (Object.fromEntries(
      SERVICE_NAMES.map((name) => [name, createRpcClient(healthV1.HealthService, cfg.addrs[name])]),
    ) as Record<ServiceName, RpcClient<typeof healthV1.HealthService>>);
  return {
    cfg,
    log,
    billing,
    agent,
    sessions,
    documents,
    health,
    close() {
      for (const client of [billing, agent, sessions, documents, ...Object.values(health)]) client.close();
    },
  };
}
