// The sessions service as a library: migrate (tests) or not (main.ts), then serve its three gRPC services. main.ts is the shell.
import { sessionsCheckpointsV1, sessionsV1, sessionsWorkspaceV1 } from "@redline/grpc-stubs";
import { migrateLatest, pingDb, type RunningService, type StartOptions, serveService } from "@redline/service-kit";
import type { SessionsConfig } from "./config.js";
import { closeContext, createContext, type SessionsContext } from "./context.js";
import { migrations, SCHEMA } from "./db/migrations.js";

/** A started service; `context` is exposed for tests and benchmarks that read Postgres directly. */
export interface RunningSessionsService extends RunningService {
  context: SessionsContext;
}

/**
 * Migrates the sessions schema (unless `opts.migrate` is false) and serves SessionsService,
 * SessionWorkspaceService, SessionCheckpointsService and Health.
 */
export async function startSessionsService(
  cfg: SessionsConfig,
  opts: StartOptions = {},
): Promise<RunningSessionsService> {
  const ctx = createContext(cfg);
  if (opts.migrate !== false) await migrateLatest(ctx.db, SCHEMA, migrations, ctx.log);
  const rpc = {
    dir: new URL("./rpc/", import.meta.url),
    definitions: [
      sessionsV1.SessionsServiceService,
      sessionsWorkspaceV1.SessionWorkspaceServiceService,
      sessionsCheckpointsV1.SessionCheckpointsServiceService,
    ],
  };
  const health = { postgres: () => pingDb(ctx.db) };
  const running = await serveService("sessions", cfg.grpcAddress, ctx, {
    rpc,
    health,
    metrics: cfg.metricsAddr,
    release: () => closeContext(ctx),
  });
  return { ...running, context: ctx };
}
