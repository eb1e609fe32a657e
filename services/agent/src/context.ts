// One place that wires the agent: its database and NATS, the clients of the services it calls,
// the engine, the logger, and the state of this instance's job workers.
import { randomBytes } from "node:crypto";
import type { sessionsV1 } from "@redline/grpc-stubs";
import {
  type Clients,
  closeClients,
  connectNats,
  createClients,
  createDb,
  createLogger,
  type Knex,
  type Logger,
  type NatsConnection,
  type TraceContext,
} from "@redline/service-kit";
import { type AgentConfig, DEFAULT_JOBS_CONFIG, type JobsConfig } from "./config.js";
import { SCHEMA } from "./db/migrations.js";
import type { JobRow } from "./db/tables.js";
import { type Engine, selectEngine } from "./engines/index.js";

/** A job this instance is running: abort it to cancel; `done` settles when the worker let go. */
export interface RunningJob {
  controller: AbortController;
  done: Promise<void>;
  /** The span of the job's run, for its calls (jobOpts) and event messages; undefined when tracing is off. */
  trace?: TraceContext;
}

/** What a job's creation read for its turn (sessions.v1 GetTurnContext). */
export type HandedContext = sessionsV1.GetTurnContextResponse;

/** An idle worker taken for a job being created. */
export interface IdleWorker {
  /** Its lease owner name. */
  name: string;
  /** Starts the inserted job (leased to `name`, still pending) on it. */
  start(row: JobRow, context: HandedContext): void;
  /** Gives it back: the job was not created. */
  release(): void;
}

/** The services the agent calls (names of SERVICE_CLIENTS). */
const CLIENTS = ["documents", "sessions", "checkpoints", "billing", "ingest", "files", "library"] as const;

/** Everything the agent's commands, turns and job workers need, with the clients of CLIENTS. */
export interface AgentContext extends Clients<(typeof CLIENTS)[number]> {
  cfg: AgentConfig;
  log: Logger;
  engine: Engine;
  /** The `agent` schema (jobs and their events). */
  db: Knex;
  nats: NatsConnection;
  jobsCfg: JobsConfig;
  /** Unique per process: the lease owner prefix of its workers. */
  instanceId: string;
  /** Jobs running on this instance, by id. */
  running: Map<string, RunningJob>;
  /**
   * Sessions with a turn record owed to the record outbox (turn/record-outbox.ts), as this
   * instance last saw them: a turn on one of them lands the owed record first.
   */
  owedSessions: Set<string>;
  /** Wakes an idle worker (a job was created or released here); set by the worker pool. */
  wake(): void;
  /**
   * Takes an idle worker of this instance for a job about to be created, or null when every
   * worker is busy (or there is no pool). The job is inserted leased to it and started with the
   * turn context its creation read: no claim round trip and no second session read.
   */
  takeIdleWorker(): IdleWorker | null;
}

/** Builds the context (connects NATS); `overrides` lets tests swap a piece (e.g. the engine). */
export async function createContext(cfg: AgentConfig, overrides: Partial<AgentContext> = {}): Promise<AgentContext> {
  const nats = overrides.nats ?? (await connectNats(cfg.natsUrl, "agent"));
  return {
    cfg,
    log: createLogger("agent", cfg.logLevel),
    engine: selectEngine({ openai: cfg.openai }),
    db: createDb(cfg.databaseUrl, SCHEMA),
    nats,
    ...createClients(cfg.addrs, CLIENTS, overrides),
    jobsCfg: { ...DEFAULT_JOBS_CONFIG, ...cfg.jobs },
    instanceId: `agent-${randomBytes(6).toString("hex")}`,
    running: new Map(),
    owedSessions: new Set(),
    wake: () => {},
    takeIdleWorker: () => null,
    ...overrides,
  };
}

/** Drains NATS, closes the database pool and every client. */
export async function closeContext(ctx: AgentContext): Promise<void> {
  await ctx.nats.drain().catch(() => {});
  await ctx.db.destroy();
  closeClients(CLIENTS, ctx);
}
