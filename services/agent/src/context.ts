// One place that wires the agent: clients of the services it calls, the engine, the logger.
import { billingV1, documentsLibraryV1, documentsV1, ingestFilesV1, ingestV1, sessionsV1 } from "@redline/grpc-stubs";
import { createLogger, createRpcClient, type Logger, type RpcClient, type ServiceAddrs } from "@redline/service-kit";
import { type Engine, type OpenAiEngineConfig, selectEngine } from "./engines/index.js";

/** Agent configuration. */
export interface AgentConfig {
  grpcAddress: string;
  addrs: Pick<ServiceAddrs, "documents" | "sessions" | "billing" | "ingest">;
  /** Wall-clock cap of one turn's AI processing, in ms (spec: 30 minutes). */
  aiTimeoutMs: number;
  /** The OpenAI-compatible provider; absent means the offline engine. */
  openai?: OpenAiEngineConfig;
  /** Earlier turns given to the model as context. */
  historyTurns: number;
  logLevel?: string;
  /** Postgres holding the `agent` schema (jobs and their events). */
  databaseUrl: string;
  /** NATS the job events are published on (subject redline.jobs.v1.<job_id>). */
  natsUrl: string;
  /** Worker pool and retention; defaults in DEFAULT_JOBS_CONFIG. */
  jobs?: Partial<JobsConfig>;
}

/** The job worker pool's knobs; durations in ms. */
export interface JobsConfig {
  /** Jobs one instance runs at once. */
  concurrency: number;
  /** How long a claim holds without a heartbeat; a dead worker's job is reclaimed after this. */
  leaseMs: number;
  /** Heartbeat period (well under leaseMs); also how often a cancel from another instance is noticed. */
  heartbeatMs: number;
  /** Runs of one job before it fails with a clear error (a worker died each time). */
  maxAttempts: number;
  /** Idle poll for jobs created on other instances or reclaimable after a crash. */
  pollMs: number;
  /** Terminal jobs are deleted this long after completion (spec: 1 hour). */
  retentionMs: number;
  /** Period of the retention and stranded-job sweep. */
  sweepMs: number;
}

/** Defaults: 4 workers, 30 s leases with 5 s heartbeats, 3 attempts, 1 h retention. */
export const DEFAULT_JOBS_CONFIG: JobsConfig = {
  concurrency: 4,
  leaseMs: 30_000,
  heartbeatMs: 5_000,
  maxAttempts: 3,
  pollMs: 1_000,
  retentionMs: 60 * 60 * 1000,
  sweepMs: 30_000,
};

/** Everything a chat turn needs. */
export interface AgentContext {
  cfg: AgentConfig;
  log: Logger;
  engine: Engine;
  documents: RpcClient<typeof documentsV1.DocumentsServiceService>;
  sessions: RpcClient<typeof sessionsV1.SessionsServiceService>;
  billing: RpcClient<typeof billingV1.BillingServiceService>;
  ingest: RpcClient<typeof ingestV1.IngestServiceService>;
  /** Attachments and templates (ingest's FilesService), for the search/quote tools and drafting. */
  files: RpcClient<typeof ingestFilesV1.FilesServiceService>;
  /** Conflicts and their resolution (documents service), for re-edit. */
  library: RpcClient<typeof documentsLibraryV1.DocumentLibraryServiceService>;
}

/** Builds the context; `overrides` lets tests swap a piece (e.g. the engine). */
export function createAgentContext(cfg: AgentConfig, overrides: Partial<AgentContext> = {}): AgentContext {
  return {
    cfg,
    log: createLogger("agent", cfg.logLevel),
    engine: selectEngine({ openai: cfg.openai }),
    documents: createRpcClient(documentsV1.DocumentsServiceService, cfg.addrs.documents),
    sessions: createRpcClient(sessionsV1.SessionsServiceService, cfg.addrs.sessions),
    billing: createRpcClient(billingV1.BillingServiceService, cfg.addrs.billing),
    ingest: createRpcClient(ingestV1.IngestServiceService, cfg.addrs.ingest),
    files: createRpcClient(ingestFilesV1.FilesServiceService, cfg.addrs.ingest),
    library: createRpcClient(documentsLibraryV1.DocumentLibraryServiceService, cfg.addrs.documents),
    ...overrides,
  };
}

/** Closes every client. */
export function closeAgentContext(ctx: AgentContext): void {
  for (const client of [ctx.documents, ctx.sessions, ctx.billing, ctx.ingest, ctx.files, ctx.library]) client.close();
}
