// Agent process entry: the only place that reads the environment.
import { DEFAULT_ADDRS, onShutdown, readAddrs } from "@redline/service-kit";
import { readJobsEnv, readOpenAiEnv } from "./config.js";
import { startAgentService } from "./service.js";

const env = process.env;
if (!env.DATABASE_URL || !env.NATS_URL) throw new Error("DATABASE_URL and NATS_URL must be set (pnpm start sets them)");
const service = await startAgentService({
  grpcAddress: env.AGENT_ADDR ?? DEFAULT_ADDRS.agent,
  addrs: readAddrs(env),
  aiTimeoutMs: Number(env.AI_TIMEOUT_MS ?? 30 * 60 * 1000),
  openai: readOpenAiEnv(env),
  historyTurns: Number(env.AGENT_HISTORY_TURNS ?? 10),
  logLevel: env.LOG_LEVEL,
  databaseUrl: env.DATABASE_URL,
  natsUrl: env.NATS_URL,
  jobs: readJobsEnv(env),
});
onShutdown(() => service.close());
