// The documents service as a library: build from config, serve, close. main.ts is the thin shell.
import { documentsLibraryV1, documentsV1 } from "@redline/grpc-stubs";
import { bindRpcFiles, type Knex, pingDb, pingNats, type RunningService, serveService } from "@redline/service-kit";
import type { DocumentsConfig } from "./config.js";
import { closeContext, createContext } from "./context.js";

/** A started service; `db` is exposed for benchmarks and tests that compare against Postgres. */
export interface RunningDocumentsService extends RunningService {
  db: Knex;
}

/** Migrates the documents schema, starts the outbox relay, serves DocumentsService, DocumentLibraryService and Health. */
export async function startDocumentsService(cfg: DocumentsConfig): Promise<RunningDocumentsService> {
  const ctx = await createContext(cfg);
  const running = await serveService({
    name: "documents",
    address: cfg.grpcAddress,
    services: await bindRpcFiles(ctx, new URL("./rpc/", import.meta.url), [
      documentsV1.DocumentsServiceService,
      documentsLibraryV1.DocumentLibraryServiceService,
    ]),
    health: { postgres: () => pingDb(ctx.db), nats: () => pingNats(ctx.nc) },
    log: ctx.log,
    release: () => closeContext(ctx),
  });
  return { ...running, db: ctx.db };
}
