// Reading the agent's environment into typed config (only main.ts and scripts call this).
import { numberFromEnv } from "@redline/service-kit";
import type { JobsConfig } from "./context.js";
import type { OpenAiEngineConfig } from "./engines/index.js";

type Env = Record<string, string | undefined>;

/**
 * The OpenAI-compatible provider from OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_MODEL and the
 * per-tier OPENAI_MODEL_{CORE,TURBO,PRO,MAX}; undefined (offline engine) when no base URL or
 * key is set. OPENAI_TIMEOUT_MS bounds one model request; OPENAI_MAX_STEPS the tool rounds.
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
  };
}

/**
 * The job worker pool from AGENT_JOB_CONCURRENCY, AGENT_JOB_LEASE_MS, AGENT_JOB_HEARTBEAT_MS,
 * AGENT_JOB_MAX_ATTEMPTS, AGENT_JOB_POLL_MS and JOB_RETENTION_MS; unset ones keep their
 * defaults (DEFAULT_JOBS_CONFIG). Throws naming the variable when one is not a positive integer.
 */
export function readJobsEnv(env: Env): Partial<JobsConfig> {
  const positive = (name: string) =>
    numberFromEnv(env, name, (n) => Number.isInteger(n) && n > 0, "a positive integer");
  const out: Partial<JobsConfig> = {
    concurrency: positive("AGENT_JOB_CONCURRENCY"),
    leaseMs: positive("AGENT_JOB_LEASE_MS"),
    heartbeatMs: positive("AGENT_JOB_HEARTBEAT_MS"),
    maxAttempts: positive("AGENT_JOB_MAX_ATTEMPTS"),
    pollMs: positive("AGENT_JOB_POLL_MS"),
    retentionMs: positive("JOB_RETENTION_MS"),
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined));
}
