// The documents service as a library: build from config, serve, close. main.ts is the thin shell.
import { documentsLibraryV1, documentsV1 } from "@redline/grpc-stubs";
import {
  type Knex,
  pingDb,
  pingNats,
  type RunningService,
  type StartOptions,
  serveService,
} from "@redline/service-kit";
import type { DocumentsConfig } from "./config.js";
import { closeContext, createContext } from "./context.js";
import { observeOutboxLag } from "./outbox-metrics.js";

/** A started service; `db` is exposed for benchmarks and tests that compare against Postgres. */
export interface RunningDocumentsService extends RunningService {
  db: Knex;
}

/**
 * Migrates the documents schema (unless `opts.migrate` is false), starts the outbox relay,
 * serves DocumentsService, DocumentLibraryService and Health.
 */
export async function startDocumentsService(
  cfg: DocumentsConfig,
  opts: StartOptions = {},
): Promise<RunningDocumentsService> {
  const ctx = await createContext(cfg, opts);
  const rpc = {
    dir: new URL("./rpc/", import.meta.url),
    definitions: [documentsV1.DocumentsServiceService, documentsLibraryV1.DocumentLibraryServiceService],
  };
  const health = { postgres: () => pingDb(ctx.db), nats: () => pingNats(ctx.nc) };
  const stopOutboxMetrics = observeOutboxLag(ctx.db);
  const running = await serveService("documents", cfg.grpcAddress, ctx, {
    rpc,
    health,
    metrics: cfg.metricsAddr,
    release: () => {
      stopOutboxMetrics();
      return closeContext(ctx);
    },
  });
  return { ...running, db: ctx.db };
}
