// The agent service as a library: start it from a config, close it. main.ts is the thin shell.
import { agentJobsV1, agentRevertV1, agentV1 } from "@redline/grpc-stubs";
import { migrateLatest, pingDb, pingNats, type RunningService, serveService } from "@redline/service-kit";
import type { AgentConfig } from "./config.js";
import { type AgentContext, closeContext, createContext } from "./context.js";
import { migrations, SCHEMA } from "./db/migrations.js";
import { startWorkerPool } from "./jobs/worker-pool.js";

/** A started agent; `context` lets tests read the jobs database. */
export interface RunningAgentService extends RunningService {
  context: AgentContext;
}

/**
 * Migrates the `agent` schema, connects NATS, starts the job worker pool and serves
 * AgentService, JobsService, RevertService and Health (Postgres and NATS). close() stops the
 * server, then the pool (running jobs keep their lease), then releases the context.
 */
export async function startAgentService(
  cfg: AgentConfig,
  overrides: Partial<AgentContext> = {},
): Promise<RunningAgentService> {
  const ctx = await createContext(cfg, overrides);
  await migrateLatest(ctx.db, SCHEMA, migrations);
  const pool = startWorkerPool(ctx);
  ctx.log.info({ engine: ctx.engine.name, instance: ctx.instanceId }, "agent starting");
  const rpc = {
    dir: new URL("./rpc/", import.meta.url),
    definitions: [agentV1.AgentServiceService, agentJobsV1.JobsServiceService, agentRevertV1.RevertServiceService],
  };
  const health = { postgres: () => pingDb(ctx.db), nats: () => pingNats(ctx.nats) };
  const release = () => pool.close().then(() => closeContext(ctx));
  const running = await serveService("agent", cfg.grpcAddress, ctx, { rpc, health, release });
  return { ...running, context: ctx };
}
