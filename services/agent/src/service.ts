// The agent service as a library: build from config, start, close. main.ts is the thin shell.
import { randomBytes } from "node:crypto";
import { agentJobsV1, agentRevertV1, agentV1, sessionsCheckpointsV1 } from "@redline/grpc-stubs";
import {
  bindService,
  connectNats,
  createDb,
  createRpcClient,
  healthService,
  migrateLatest,
  pingDb,
  pingNats,
  startGrpcServer,
} from "@redline/service-kit";
import { runChatTurn } from "./commands/chat-turn.js";
import { runReEdit } from "./commands/re-edit.js";
import { redoRevert, revertSession } from "./commands/revert.js";
import {
  type AgentConfig,
  type AgentContext,
  closeAgentContext,
  createAgentContext,
  DEFAULT_JOBS_CONFIG,
} from "./context.js";
import {
  cancelJob,
  continueJob,
  countActiveJobs,
  createChatJob,
  decideChanges,
  getJob,
  getJobEvents,
  listOwnJobs,
} from "./jobs/commands.js";
import type { JobsContext } from "./jobs/runtime.js";
import { startWorkerPool } from "./jobs/worker-pool.js";
import { migrations, SCHEMA } from "./migrations.js";

/** A started service. */
export interface RunningAgentService {
  address: string;
  context: JobsContext;
  close(): Promise<void>;
}

/** Handlers of agent.v1.AgentService. */
export function agentHandlers(ctx: AgentContext) {
  return bindService(agentV1.AgentServiceService, {
    chat: (req, call) => runChatTurn(ctx, call, req),
    reEditChunk: (req, call) => runReEdit(ctx, call, req),
  });
}

/** Handlers of agent.v1.JobsService. */
export function jobsHandlers(ctx: JobsContext) {
  return bindService(agentJobsV1.JobsServiceService, {
    createChatJob: (req, call) => createChatJob(ctx, call, req),
    getJob: (req, call) => getJob(ctx, call, req),
    listJobs: (req, call) => listOwnJobs(ctx, call, req),
    cancelJob: (req, call) => cancelJob(ctx, call, req),
    getJobEvents: (req, call) => getJobEvents(ctx, call, req),
    decideChanges: (req, call) => decideChanges(ctx, call, req),
    continueJob: (req, call) => continueJob(ctx, call, req),
    countActiveJobs: (req, call) => countActiveJobs(ctx, call, req),
  });
}

/** Handlers of agent.v1.RevertService. */
export function revertHandlers(ctx: JobsContext) {
  return bindService(agentRevertV1.RevertServiceService, {
    revertSession: (req, call) => revertSession(ctx, call, req),
    redoRevert: (req, call) => redoRevert(ctx, call, req),
  });
}

/**
 * Migrates the `agent` schema, connects NATS, starts the job worker pool and serves
 * AgentService, JobsService and Health (health checks Postgres and NATS).
 */
export async function startAgentService(
  cfg: AgentConfig,
  overrides: Partial<AgentContext> = {},
): Promise<RunningAgentService> {
  const base = createAgentContext(cfg, overrides);
  const db = createDb(cfg.databaseUrl, SCHEMA);
  await migrateLatest(db, SCHEMA, migrations);
  const nats = await connectNats(cfg.natsUrl, "agent");
  const ctx: JobsContext = {
    ...base,
    db,
    nats,
    jobsCfg: { ...DEFAULT_JOBS_CONFIG, ...cfg.jobs },
    instanceId: `agent-${randomBytes(6).toString("hex")}`,
    running: new Map(),
    wake: () => {},
    takeIdleWorker: () => null,
    checkpoints: createRpcClient(sessionsCheckpointsV1.SessionCheckpointsServiceService, cfg.addrs.sessions),
  };
  const pool = startWorkerPool(ctx);
  const server = await startGrpcServer(
    cfg.grpcAddress,
    [
      agentHandlers(ctx),
      jobsHandlers(ctx),
      revertHandlers(ctx),
      healthService({ postgres: () => pingDb(db), nats: () => pingNats(nats) }),
    ],
    ctx.log,
  );
  ctx.log.info({ address: server.address, engine: ctx.engine.name, instance: ctx.instanceId }, "agent listening");
  return {
    address: server.address,
    context: ctx,
    async close() {
      await server.close();
      await pool.close();
      await nats.drain().catch(() => {});
      await db.destroy();
      ctx.checkpoints.close();
      closeAgentContext(ctx);
    },
  };
}
