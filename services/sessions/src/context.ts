// One place that wires the sessions service: its database, logger and documents clients.
import {
  type Clients,
  closeClients,
  createClients,
  createDb,
  createLogger,
  type Knex,
  type Logger,
} from "@redline/service-kit";
import type { SessionsConfig } from "./config.js";
import { SCHEMA } from "./db/migrations.js";

/** The services sessions calls: documents (create and replace, for save and upload) and library (metadata, save, archive, unarchive). */
const CLIENTS = ["documents", "library"] as const;

/** What the sessions RPCs and commands use, with the clients of CLIENTS. */
export interface SessionsContext extends Clients<(typeof CLIENTS)[number]> {
  cfg: SessionsConfig;
  db: Knex;
  log: Logger;
}

/** Builds the context; `overrides` lets tests swap a piece. */
export function createContext(cfg: SessionsConfig, overrides: Partial<SessionsContext> = {}): SessionsContext {
  return {
    cfg,
    db: createDb(cfg.databaseUrl, SCHEMA),
    log: createLogger("sessions", cfg.logLevel),
    ...createClients(cfg.addrs, CLIENTS, overrides),
    ...overrides,
  };
}

/** Closes the clients and the pool. */
export async function closeContext(ctx: SessionsContext): Promise<void> {
  closeClients(CLIENTS, ctx);
  await ctx.db.destroy();
}
