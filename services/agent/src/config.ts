// The agent's configuration and the only code that reads its environment variables.
import {
  listenAddr,
  numberFromEnv,
  readAddrs,
  readMetricsAddr,
  readTracingEnv,
  requireEnv,
  type ServiceAddrs,
  type TracingConfig,
} from "@redline/service-kit";
import type { OpenAiEngineConfig } from "./engines/index.js";

type Env = Record<string, string | undefined>;

/** Agent configuration. */
export interface AgentConfig {
  /** METRICS_ADDR: host:port of GET /metrics (port 0 picks one), "off" records nothing; unset: not served. */
  metricsAddr?: string;
  grpcAddress: string;
  addrs: Pick<ServiceAddrs, "documents" | "sessions" | "billing" | "ingest">;
  /** Wall-clock cap of one turn's AI processing, in ms (spec: 30 minutes). */
  aiTimeoutMs: number;
  /**
   * How long a sync turn's hold lives in billing before its sweep releases it (a turn whose agent
   * died mid-turn then charges nothing), in ms; longer than aiTimeoutMs. Default: syncHoldExpiryMs().
   */
  syncHoldExpiryMs?: number;
  /** The OpenAI-compatible provider; absent means the offline engine. */
  openai?: OpenAiEngineConfig;
  /** Earlier turns given to the model as context. */
  historyTurns: number;
  logLevel?: string;
  /** OTLP trace export from OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT and OTEL_SERVICE_NAME; absent: off. */
  tracing?: TracingConfig;
  /** Postgres holding the `agent` schema (jobs and their events). */
  databaseUrl: string;
  /** NATS the job events are published on (subject redline.jobs.v1.<job_id>). */
  natsUrl: string;
  /** Worker pool and retention; defaults in DEFAULT_JOBS_CONFIG. */
  jobs?: Partial<JobsConfig>;
  /**
   * How long a committed sync turn waits for billing's settle and sessions' AppendTurn before it
   * answers anyway and leaves them to the record outbox (turn/record-outbox.ts), in ms; cut to
   * the caller's deadline. Default TURN_RECORD_WAIT_MS_DEFAULT.
   */
  turnRecordWaitMs?: number;
  /** Period of the record outbox's relay, in ms. Default TURN_RECORD_RELAY_MS_DEFAULT. */
  turnRecordRelayMs?: number;
}

/** A committed turn's wait for its settle and record: long enough to ride out a service restart. */
export const TURN_RECORD_WAIT_MS_DEFAULT = 15_000;
/** The record outbox relay's period: a late record lands within seconds of its service's return. */
export const TURN_RECORD_RELAY_MS_DEFAULT = 2_000;

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
  /**
   * How long a job may wait in awaiting_approval before the sweep fails it (pending changes
   * dropped, its hold released), counted from when it began waiting (APPROVAL_TIMEOUT_S).
   */
  approvalTimeoutMs: number;
}

/**
 * Past the AI cap, what a sync turn may still spend committing, settling (SETTLE_PATIENCE_MS) and
 * recording its turn before its hold may be released: generous, since releasing a live turn's
 * hold early would make it free.
 */
export const SYNC_HOLD_MARGIN_MS = 5 * 60 * 1000;

/** The expiry of a sync turn's hold: the configured one, else the AI cap plus SYNC_HOLD_MARGIN_MS. */
export function syncHoldExpiryMs(cfg: Pick<AgentConfig, "aiTimeoutMs" | "syncHoldExpiryMs">): number {
  return cfg.syncHoldExpiryMs ?? cfg.aiTimeoutMs + SYNC_HOLD_MARGIN_MS;
}

/** Defaults: 4 workers, 30 s leases with 5 s heartbeats, 3 attempts, 1 h retention, 1 h approval wait. */
export const DEFAULT_JOBS_CONFIG: JobsConfig = {
  concurrency: 4,
  leaseMs: 30_000,
  heartbeatMs: 5_000,
  maxAttempts: 3,
  pollMs: 1_000,
  retentionMs: 60 * 60 * 1000,
  sweepMs: 30_000,
  approvalTimeoutMs: 60 * 60 * 1000,
};

/**
 * The agent's config from the environment: DATABASE_URL and NATS_URL (required; the agent uses
 * no S3), LISTEN_ADDR (the bind address; default AGENT_ADDR, else 127.0.0.1:8063), the other
 * *_ADDR, AI_TIMEOUT_MS (default 30 minutes), SYNC_HOLD_EXPIRY_MS (a sync turn's hold in billing;
 * must exceed AI_TIMEOUT_MS; default syncHoldExpiryMs()), AGENT_HISTORY_TURNS (10), LOG_LEVEL, the
 * OpenAI provider, the job pool (below), TURN_RECORD_WAIT_MS and TURN_RECORD_RELAY_MS (positive;
 * the record outbox's wait and period).
 */
export function loadConfig(env: Env): AgentConfig {
  const positive = (name: string) => numberFromEnv(env, name, (n) => n > 0, "a positive number");
  const aiTimeoutMs = positive("AI_TIMEOUT_MS") ?? 30 * 60 * 1000;
  const syncHold = numberFromEnv(
    env,
    "SYNC_HOLD_EXPIRY_MS",
    (n) => Number.isInteger(n) && n > aiTimeoutMs,
    `an integer above AI_TIMEOUT_MS (${aiTimeoutMs})`,
  );
  return {
    grpcAddress: listenAddr(env, "agent"),
    metricsAddr: readMetricsAddr(env),
    addrs: readAddrs(env),
    aiTimeoutMs,
    syncHoldExpiryMs: syncHold,
    openai: readOpenAiEnv(env),
    historyTurns: numberFromEnv(env, "AGENT_HISTORY_TURNS", (n) => n >= 0, "a number >= 0") ?? 10,
    logLevel: env.LOG_LEVEL,
    tracing: readTracingEnv(env),
    databaseUrl: requireEnv(env, "DATABASE_URL"),
    natsUrl: requireEnv(env, "NATS_URL"),
    jobs: readJobsEnv(env),
    turnRecordWaitMs: positive("TURN_RECORD_WAIT_MS"),
    turnRecordRelayMs: positive("TURN_RECORD_RELAY_MS"),
  };
}

/**
 * The OpenAI-compatible provider from OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_MODEL and the
 * per-tier OPENAI_MODEL_{CORE,TURBO,PRO,MAX}; undefined (offline engine) when no base URL or
 * key is set. OPENAI_TIMEOUT_MS bounds one model request; OPENAI_MAX_STEPS the tool rounds.
 * Servers' quirks: OPENAI_CONTEXT_TOKENS (the model's context window, a positive integer; unset:
 * budgets for 128k models), OPENAI_TOOL_MODE (auto | native | structured; default auto) and
 * OPENAI_RETRY_AFTER_MAX_S (longest Retry-After honoured, seconds; default 60). Throws naming the
 * variable when one is malformed.
 */
export function readOpenAiEnv(env: Env): OpenAiEngineConfig | undefined {
  if (!env.OPENAI_BASE_URL && !env.OPENAI_API_KEY) return undefined;
  const model = env.OPENAI_MODEL ?? "gpt-4o-mini";
  return {
    baseURL: env.OPENAI_BASE_URL ?? "https://api.openai.com/v1",
    apiKey: env.OPENAI_API_KEY ?? "not-needed",
    models: {
      core: env.OPENAI_MODEL_CORE ?? model,
      turbo: env.OPENAI_MODEL_TURBO ?? model,
      pro: env.OPENAI_MODEL_PRO ?? model,
      max: env.OPENAI_MODEL_MAX ?? model,
    },
    requestTimeoutMs: Number(env.OPENAI_TIMEOUT_MS ?? 120_000),
    maxSteps: Number(env.OPENAI_MAX_STEPS ?? 24),
    ...readQuirksEnv(env),
  };
}

const TOOL_MODES = ["auto", "native", "structured"] as const;

/** OPENAI_CONTEXT_TOKENS, OPENAI_TOOL_MODE and OPENAI_RETRY_AFTER_MAX_S (see readOpenAiEnv); unset ones absent. */
function readQuirksEnv(env: Env): Pick<OpenAiEngineConfig, "contextTokens" | "toolMode" | "retryAfterMaxMs"> {
  const contextTokens = numberFromEnv(
    env,
    "OPENAI_CONTEXT_TOKENS",
    (n) => Number.isInteger(n) && n >= 512,
    "an integer of at least 512 (tokens)",
  );
  const retryAfterMaxS = numberFromEnv(env, "OPENAI_RETRY_AFTER_MAX_S", (n) => n > 0, "a positive number (seconds)");
  const mode = env.OPENAI_TOOL_MODE?.trim();
  if (mode && !(TOOL_MODES as readonly string[]).includes(mode)) {
    throw new Error(`OPENAI_TOOL_MODE must be one of ${TOOL_MODES.join(", ")}, got "${mode}"`);
  }
  return {
    ...(contextTokens !== undefined && { contextTokens }),
    ...(mode && { toolMode: mode as (typeof TOOL_MODES)[number] }),
    ...(retryAfterMaxS !== undefined && { retryAfterMaxMs: retryAfterMaxS * 1000 }),
  };
}

/**
 * The job worker pool from AGENT_JOB_CONCURRENCY, AGENT_JOB_LEASE_MS, AGENT_JOB_HEARTBEAT_MS,
 * AGENT_JOB_MAX_ATTEMPTS, AGENT_JOB_POLL_MS, JOB_RETENTION_MS and APPROVAL_TIMEOUT_S (seconds);
 * unset ones keep their defaults (DEFAULT_JOBS_CONFIG). Throws naming the variable when one is
 * not a positive integer.
 */
export function readJobsEnv(env: Env): Partial<JobsConfig> {
  const positive = (name: string) =>
    numberFromEnv(env, name, (n) => Number.isInteger(n) && n > 0, "a positive integer");
  const seconds = positive("APPROVAL_TIMEOUT_S");
  const out: Partial<JobsConfig> = {
    concurrency: positive("AGENT_JOB_CONCURRENCY"),
    leaseMs: positive("AGENT_JOB_LEASE_MS"),
    heartbeatMs: positive("AGENT_JOB_HEARTBEAT_MS"),
    maxAttempts: positive("AGENT_JOB_MAX_ATTEMPTS"),
    pollMs: positive("AGENT_JOB_POLL_MS"),
    retentionMs: positive("JOB_RETENTION_MS"),
    approvalTimeoutMs: seconds === undefined ? undefined : seconds * 1000,
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined));
}
