// The sessions service as a library: migrate, then serve its three gRPC services. main.ts is the shell.
import { migrateLatest, pingDb, type RunningService, serveService } from "@redline/service-kit";
import type { SessionsConfig } from "./config.js";
import { closeContext, createContext, type SessionsContext } from "./context.js";
import { migrations, SCHEMA } from "./db/migrations.js";
import { checkpointsHandlers, sessionsHandlers, workspaceHandlers } from "./rpc/index.js";

/** A started service; `context` is exposed for tests and benchmarks that read Postgres directly. */
export interface RunningSessionsService extends RunningService {
  context: SessionsContext;
}

/** Migrates the sessions schema and serves SessionsService, SessionWorkspaceService, SessionCheckpointsService and Health. */
export async function startSessionsService(cfg: SessionsConfig): Promise<RunningSessionsService> {
  const ctx = createContext(cfg);
  await migrateLatest(ctx.db, SCHEMA, migrations);
  const running = await serveService({
    name: "sessions",
    address: cfg.grpcAddress,
    services: [sessionsHandlers(ctx), workspaceHandlers(ctx), checkpointsHandlers(ctx)],
    health: { postgres: () => pingDb(ctx.db) },
    log: ctx.log,
    release: () => closeContext(ctx),
  });
  return { ...running, context: ctx };
}
