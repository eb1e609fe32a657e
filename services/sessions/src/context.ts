// One place that wires the sessions service: its database, logger and documents clients.
import { documentsLibraryV1, documentsV1 } from "@redline/grpc-stubs";
import { createDb, createLogger, createRpcClient, type Knex, type Logger, type RpcClient } from "@redline/service-kit";
import type { SessionsConfig } from "./config.js";
import { SCHEMA } from "./db/migrations.js";

/** What the sessions RPCs and commands use. */
export interface SessionsContext {
  cfg: SessionsConfig;
  db: Knex;
  log: Logger;
  /** Create and replace (the save and upload workflows). */
  documents: RpcClient<typeof documentsV1.DocumentsServiceService>;
  /** Metadata, save, archive and unarchive. */
  library: RpcClient<typeof documentsLibraryV1.DocumentLibraryServiceService>;
}

/** Builds the context; `overrides` lets tests swap a piece. */
export function createContext(cfg: SessionsConfig, overrides: Partial<SessionsContext> = {}): SessionsContext {
  return {
    cfg,
    db: createDb(cfg.databaseUrl, SCHEMA),
    log: createLogger("sessions", cfg.logLevel),
    documents: createRpcClient(documentsV1.DocumentsServiceService, cfg.addrs.documents),
    library: createRpcClient(documentsLibraryV1.DocumentLibraryServiceService, cfg.addrs.documents),
    ...overrides,
  };
}

/** Closes the clients and the pool. */
export async function closeContext(ctx: SessionsContext): Promise<void> {
  ctx.documents.close();
  ctx.library.close();
  await ctx.db.destroy();
}
