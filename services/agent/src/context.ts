// One place that wires the agent: clients of the services it calls, the engine, the logger.
import { billingV1, documentsV1, ingestV1, sessionsV1 } from "@redline/grpc-stubs";
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
}

/** Everything a chat turn needs. */
export interface AgentContext {
  cfg: AgentConfig;
  log: Logger;
  engine: Engine;
  documents: RpcClient<typeof documentsV1.DocumentsServiceService>;
  sessions: RpcClient<typeof sessionsV1.SessionsServiceService>;
  billing: RpcClient<typeof billingV1.BillingServiceService>;
  ingest: RpcClient<typeof ingestV1.IngestServiceService>;
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
    ...overrides,
  };
}

/** Closes every client. */
export function closeAgentContext(ctx: AgentContext): void {
  for (const client of [ctx.documents, ctx.sessions, ctx.billing, ctx.ingest]) client.close();
}
