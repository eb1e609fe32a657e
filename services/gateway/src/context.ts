// The one place that wires the gateway's dependencies: a typed gRPC client per service, a health
// client per service, and the logger. Routes receive this object; tests may pass overrides.
import {
  agentJobsV1,
  agentRevertV1,
  agentV1,
  billingV1,
  documentsLibraryV1,
  documentsV1,
  healthV1,
  ingestFilesV1,
  ingestV1,
  sessionsV1,
  sessionsWorkspaceV1,
} from "@redline/grpc-stubs";
import { createLogger, createRpcClient, type Logger, type RpcClient, type ServiceAddrs } from "@redline/service-kit";
import type { GatewayConfig } from "./config.js";
import { createJobEventFeed, type JobEventFeed } from "./job-events.js";

/** The services whose health /health reports, in report order. */
export const SERVICE_NAMES = ["agent", "billing", "documents", "ingest", "sessions"] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number] & keyof ServiceAddrs;

/** Everything a route handler may use. */
export interface GatewayContext {
  cfg: GatewayConfig;
  log: Logger;
  billing: RpcClient<typeof billingV1.BillingServiceService>;
  agent: RpcClient<typeof agentV1.AgentServiceService>;
  /** Async chat jobs (agent service). */
  jobs: RpcClient<typeof agentJobsV1.JobsServiceService>;
  /** Live job events from NATS, for progress streams. */
  jobEvents: JobEventFeed;
  /** Revert and redo-revert (agent service). */
  revert: RpcClient<typeof agentRevertV1.RevertServiceService>;
  sessions: RpcClient<typeof sessionsV1.SessionsServiceService>;
  documents: RpcClient<typeof documentsV1.DocumentsServiceService>;
  /** The Files view, saves, document events and conflicts (documents service). */
  library: RpcClient<typeof documentsLibraryV1.DocumentLibraryServiceService>;
  /** Rosters, holders, editor actions and memory notes (sessions service). */
  workspace: RpcClient<typeof sessionsWorkspaceV1.SessionWorkspaceServiceService>;
  /** Conversions of uploads (ingest). */
  ingest: RpcClient<typeof ingestV1.IngestServiceService>;
  /** Exports, uploads, attachments and templates (ingest's FilesService). */
  files: RpcClient<typeof ingestFilesV1.FilesServiceService>;
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
  const jobs = overrides.jobs ?? createRpcClient(agentJobsV1.JobsServiceService, cfg.addrs.agent);
  const jobEvents = overrides.jobEvents ?? createJobEventFeed(cfg.natsUrl, log);
  const revert = overrides.revert ?? createRpcClient(agentRevertV1.RevertServiceService, cfg.addrs.agent);
  const sessions = overrides.sessions ?? createRpcClient(sessionsV1.SessionsServiceService, cfg.addrs.sessions);
  const documents = overrides.documents ?? createRpcClient(documentsV1.DocumentsServiceService, cfg.addrs.documents);
  const library =
    overrides.library ?? createRpcClient(documentsLibraryV1.DocumentLibraryServiceService, cfg.addrs.documents);
  const workspace =
    overrides.workspace ?? createRpcClient(sessionsWorkspaceV1.SessionWorkspaceServiceService, cfg.addrs.sessions);
  const ingest = overrides.ingest ?? createRpcClient(ingestV1.IngestServiceService, cfg.addrs.ingest);
  const files = overrides.files ?? createRpcClient(ingestFilesV1.FilesServiceService, cfg.addrs.ingest);
  const health =
    overrides.health ??
    (Object.fromEntries(
      SERVICE_NAMES.map((name) => [name, createRpcClient(healthV1.HealthService, cfg.addrs[name])]),
    ) as Record<ServiceName, RpcClient<typeof healthV1.HealthService>>);
  const clients = { billing, agent, jobs, revert, sessions, documents, library, workspace, ingest, files };
  return {
    cfg,
    log,
    ...clients,
    jobEvents,
    health,
    close() {
      void jobEvents.close();
      for (const client of [...Object.values(clients), ...Object.values(health)]) client.close();
    },
  };
}
