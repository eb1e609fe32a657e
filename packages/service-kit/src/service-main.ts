// The process entry every service's main.ts hands itself to: `main.js` serves (after checking
// that the schema has every migration), `main.js migrate` applies the migrations and exits.
// Failures end the process with one clear log line and a non-zero code.
import { createDb } from "./db.js";
import { createLogger, type Logger } from "./logger.js";
import { migrateLatest, SchemaOutOfDateError, type SchemaSpec, verifySchema } from "./migrations.js";
import { onShutdown, type ShutdownOptions, type Stoppable } from "./shutdown.js";
import { initTracing, type TracingConfig } from "./tracing.js";

/** What a service's main.ts declares, built from its config. */
export interface ServiceMain {
  /** pino level of the process's own lines (the config's LOG_LEVEL). */
  logLevel?: string;
  /**
   * The schema `migrate` applies and start requires current, on `databaseUrl`. Absent (the
   * gateway) or without a URL (ingest without storage): the service has no schema.
   */
  schema?: SchemaSpec & { databaseUrl?: string };
  /** OTLP trace export (the config's OTEL_* variables); absent: tracing off. */
  tracing?: TracingConfig;
  /** Starts the service without migrating (its schema was checked just before). */
  start(): Promise<Stoppable>;
}

/** Exit codes: 1 failure (start, migration, schema not current), 2 usage. */
const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;

/**
 * Runs the process of service `name` for the command line `argv` (process.argv.slice(2)):
 * no argument serves until SIGTERM/SIGINT (onShutdown); `migrate` applies the schema's pending
 * migrations and exits 0. `load` reads the config (loadConfig(process.env)); its error, an
 * unknown argument, a schema missing migrations (SchemaOutOfDateError, naming them) and a
 * failed start or migration each end the process with one log line and a non-zero exit code.
 */
export async function runServiceMain(
  name: string,
  argv: string[],
  load: () => ServiceMain,
  shutdown: ShutdownOptions = {},
): Promise<void> {
  const exit = shutdown.exit ?? ((code: number) => process.exit(code));
  let spec: ServiceMain;
  try {
    spec = load();
  } catch (err) {
    createLogger(name).fatal({ err }, `${name}: bad configuration: ${(err as Error).message}`);
    return exit(EXIT_FAILURE);
  }
  const log = createLogger(name, spec.logLevel);
  const [command, ...rest] = argv;
  if (command === "migrate" && rest.length === 0) return exit(await migrate(name, spec, log));
  if (command !== undefined) {
    log.fatal({ argv }, `${name}: unknown arguments "${argv.join(" ")}"; usage: main.js [migrate]`);
    return exit(EXIT_USAGE);
  }

  // Before start, so the first request is traced; flushed after the service closed, so the
  // spans of the requests it drained are exported too.
  const tracing = initTracing(name, spec.tracing);
  // A signal during start waits for it, then closes what started.
  let started: Promise<Stoppable> | undefined;
  onShutdown(
    async (opts) => {
      await (await started)?.close(opts);
      await tracing.shutdown().catch((err) => log.warn({ err }, "flushing traces failed"));
    },
    log,
    { ...shutdown, exit },
  );
  try {
    if (spec.schema?.databaseUrl) await checkSchema(spec.schema.databaseUrl, spec.schema);
    started = spec.start();
    await started;
  } catch (err) {
    if (err instanceof SchemaOutOfDateError) log.fatal({ schema: err.schema, missing: err.missing }, err.message);
    else log.fatal({ err }, `${name} failed to start: ${(err as Error).message}`);
    return exit(EXIT_FAILURE);
  }
}

/** Reads the applied migrations on a connection of its own; throws SchemaOutOfDateError. */
async function checkSchema(databaseUrl: string, { schema, migrations }: SchemaSpec): Promise<void> {
  const db = createDb(databaseUrl, schema, 1);
  try {
    await verifySchema(db, schema, migrations);
  } finally {
    await db.destroy();
  }
}

/** The `migrate` command: applies pending migrations; the exit code. */
async function migrate(name: string, spec: ServiceMain, log: Logger): Promise<number> {
  if (!spec.schema) {
    log.info(`${name} has no database schema: nothing to migrate`);
    return 0;
  }
  const { schema, migrations, databaseUrl } = spec.schema;
  if (!databaseUrl) {
    log.fatal({ schema }, `${name}: DATABASE_URL is not set, so schema "${schema}" cannot be migrated`);
    return EXIT_FAILURE;
  }
  const db = createDb(databaseUrl, schema, 2);
  try {
    const started = Date.now();
    const applied = await migrateLatest(db, schema, migrations, log);
    const ms = Date.now() - started;
    if (applied.length === 0)
      log.info({ schema, ms }, `schema "${schema}" is up to date (${migrations.length} migrations)`);
    else log.info({ schema, applied, ms }, `schema "${schema}": applied ${applied.length}: ${applied.join(", ")}`);
    return 0;
  } catch (err) {
    log.fatal({ err, schema }, `schema "${schema}": migration failed: ${(err as Error).message}`);
    return EXIT_FAILURE;
  } finally {
    await db.destroy().catch(() => {});
  }
}
