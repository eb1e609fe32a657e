// The sessions service as a library: migrate (tests) or not (main.ts), then serve its gRPC services. main.ts is the shell.
import { sessionsCheckpointsV1, sessionsV1, sessionsWorkspaceV1, webhooksV1 } from "@redline/grpc-stubs";
import {
  migrateLatest,
  pingDb,
  pingNats,
  type RunningService,
  type StartOptions,
  serveService,
} from "@redline/service-kit";
import type { SessionsConfig } from "./config.js";
import { closeContext, createContext, type SessionsContext } from "./context.js";
import { migrations, SCHEMA } from "./db/migrations.js";
import { startWebhooks } from "./webhooks/runtime.js";

/** A started service; `context` is exposed for tests and benchmarks that read Postgres directly. */
export interface RunningSessionsService extends RunningService {
  context: SessionsContext;
}

/**
 * Migrates the sessions schema (unless `opts.migrate` is false), starts the webhooks runtime
 * (NATS, the enqueuer and the delivery worker) and serves SessionsService,
 * SessionWorkspaceService, SessionCheckpointsService (rpc/), WebhooksService (rpc/webhooks/) and
 * Health (Postgres and NATS).
 */
export async function startSessionsService(
  cfg: SessionsConfig,
  opts: StartOptions = {},
): Promise<RunningSessionsService> {
  const ctx = createContext(cfg);
  if (opts.migrate !== false) await migrateLatest(ctx.db, SCHEMA, migrations, ctx.log);
  const webhooks = await startWebhooks(ctx, cfg.natsUrl);
  const rpc = [
    {
      dir: new URL("./rpc/", import.meta.url),
      definitions: [
        sessionsV1.SessionsServiceService,
        sessionsWorkspaceV1.SessionWorkspaceServiceService,
        sessionsCheckpointsV1.SessionCheckpointsServiceService,
      ],
    },
    { dir: new URL("./rpc/webhooks/", import.meta.url), definitions: [webhooksV1.WebhooksServiceService] },
  ];
  const health = { postgres: () => pingDb(ctx.db), nats: () => pingNats(webhooks.nc) };
  try {
    const running = await serveService("sessions", cfg.grpcAddress, ctx, {
      rpc,
      health,
      metrics: cfg.metricsAddr,
      stop: () => webhooks.stop(),
      release: () => closeContext(ctx),
    });
    return { ...running, context: ctx };
  } catch (err) {
    await webhooks.stop();
    await closeContext(ctx);
    throw err;
  }
}
