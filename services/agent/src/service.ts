// The agent service as a library: start it from a config, close it. main.ts is the thin shell.
import { agentJobsV1, agentRevertV1, agentV1 } from "@redline/grpc-stubs";
import {
  migrateLatest,
  pingDb,
  pingNats,
  type RunningService,
  type StartOptions,
  serveService,
} from "@redline/service-kit";
import type { AgentConfig } from "./config.js";
import { type AgentContext, closeContext, createContext } from "./context.js";
import { migrations, SCHEMA } from "./db/migrations.js";
import { startLifecycleRelay } from "./jobs/lifecycle-relay.js";
import { observeJobQueue } from "./jobs/metrics.js";
import { startWorkerPool } from "./jobs/worker-pool.js";
import { startTurnRecordRelay } from "./turn/record-outbox.js";

/** A started agent; `context` lets tests read the jobs database. */
export interface RunningAgentService extends RunningService {
  context: AgentContext;
}

/**
 * Migrates the `agent` schema (unless `opts.migrate` is false), connects NATS, starts the job
 * worker pool, the record outbox's relay (turn/record-outbox.ts) and the job lifecycle relay
 * (jobs/lifecycle-relay.ts: completed, failed and awaiting-approval events to JetStream) and serves AgentService,
 * JobsService, RevertService and Health (Postgres and NATS). close() reports NOT_SERVING and
 * stops the pool at once (it stops claiming and hands its running jobs back, so another agent
 * continues them), drains the RPCs in flight, then stops the relay and releases the context.
 */
export async function startAgentService(
  cfg: AgentConfig,
  overrides: Partial<AgentContext> = {},
  opts: StartOptions = {},
): Promise<RunningAgentService> {
  const ctx = await createContext(cfg, overrides);
  if (opts.migrate !== false) await migrateLatest(ctx.db, SCHEMA, migrations, ctx.log);
  const pool = startWorkerPool(ctx);
  const stopQueueMetrics = observeJobQueue(ctx.db);
  const stopRecordRelay = startTurnRecordRelay(ctx, ctx.log, cfg.turnRecordRelayMs);
  const stopLifecycleRelay = await startLifecycleRelay(ctx, ctx.log.child({ component: "lifecycle-relay" }));
  ctx.log.info({ engine: ctx.engine.name, instance: ctx.instanceId }, "agent starting");
  const rpc = {
    dir: new URL("./rpc/", import.meta.url),
    definitions: [agentV1.AgentServiceService, agentJobsV1.JobsServiceService, agentRevertV1.RevertServiceService],
  };
  const health = { postgres: () => pingDb(ctx.db), nats: () => pingNats(ctx.nats) };
  const running = await serveService("agent", cfg.grpcAddress, ctx, {
    rpc,
    health,
    metrics: cfg.metricsAddr,
    stop: () => pool.close(),
    release: async () => {
      stopQueueMetrics();
      await stopRecordRelay();
      await stopLifecycleRelay();
      return closeContext(ctx);
    },
  });
  return { ...running, context: ctx };
}
