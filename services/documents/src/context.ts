// One place that wires the documents service: its logger, database, NATS connection
// and the outbox relay loop that publishes committed events.
import {
  connectNats,
  createDb,
  createLogger,
  type Knex,
  type Logger,
  migrateLatest,
  type NatsConnection,
  type StartOptions,
} from "@redline/service-kit";
import { type OutboxRelay, startOutboxRelay } from "./commands/outbox-relay.js";
import type { DocumentsConfig } from "./config.js";
import { migrations, SCHEMA } from "./db/migrations.js";

/** What the RPCs of the documents service use. */
export interface DocumentsContext {
  cfg: DocumentsConfig;
  log: Logger;
  db: Knex;
  nc: NatsConnection;
  /** `kick()` after a commit wrote an outbox row, so its event is published now, not at the next poll. */
  relay: OutboxRelay;
}

/**
 * Connects the database (migrating it unless `opts.migrate` is false), connects NATS and starts
 * the outbox relay.
 */
export async function createContext(cfg: DocumentsConfig, opts: StartOptions = {}): Promise<DocumentsContext> {
  const log = createLogger("documents", cfg.logLevel);
  const db = createDb(cfg.databaseUrl, SCHEMA);
  if (opts.migrate !== false) await migrateLatest(db, SCHEMA, migrations, log);
  const nc = await connectNats(cfg.natsUrl, "documents");
  const relay = await startOutboxRelay(db, nc, log.child({ component: "outbox-relay" }));
  return { cfg, log, db, nc, relay };
}

/** Stops the relay, then drains NATS and closes the pool (the server has stopped already). */
export async function closeContext(ctx: DocumentsContext): Promise<void> {
  await ctx.relay.stop();
  await ctx.nc.drain();
  await ctx.db.destroy();
}
