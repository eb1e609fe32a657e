// One place that wires the sessions service: its database, logger, documents clients and webhook settings
// (the webhooks runtime, webhooks/runtime.ts, adds NATS and the workers when the service starts).
import {
  type Clients,
  closeClients,
  createClients,
  createDb,
  createLogger,
  type Knex,
  type Logger,
} from "@redline/service-kit";
import { DEFAULT_WEBHOOKS_CONFIG, type SessionsConfig, type WebhooksConfig } from "./config.js";
import { SCHEMA } from "./db/migrations.js";

/** The services sessions calls: documents (create and replace, for save and upload) and library (metadata, save, archive, unarchive). */
const CLIENTS = ["documents", "library"] as const;

/** What the sessions RPCs and commands use, with the clients of CLIENTS. */
export interface SessionsContext extends Clients<(typeof CLIENTS)[number]> {
  cfg: SessionsConfig;
  db: Knex;
  log: Logger;
  /** The webhooks settings with defaults applied. */
  webhooks: WebhooksConfig;
}

/** Builds the context; `overrides` lets tests swap a piece. */
export function createContext(cfg: SessionsConfig, overrides: Partial<SessionsContext> = {}): SessionsContext {
  return {
    cfg,
    db: createDb(cfg.databaseUrl, SCHEMA),
    log: createLogger("sessions", cfg.logLevel),
    webhooks: { ...DEFAULT_WEBHOOKS_CONFIG, ...cfg.webhooks },
    ...createClients(cfg.addrs, CLIENTS, overrides),
    ...overrides,
  };
}

/** Closes the clients and the pool. */
export async function closeContext(ctx: SessionsContext): Promise<void> {
  closeClients(CLIENTS, ctx);
  await ctx.db.destroy();
}
