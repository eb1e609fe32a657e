// A service's schema and its migrations: apply them (the `migrate` command, tests, `pnpm start`)
// or check at start that none is pending (services in production never migrate at boot).
// Concurrent runners on one schema are serialized by a Postgres advisory lock, so two `migrate`
// runs started together both succeed and apply each migration once.
import type { Knex } from "knex";
import type { Logger } from "./logger.js";

/** One immutable, timestamped migration (name like "20261121T0900_create_documents"). */
export interface Migration {
  name: string;
  up(db: Knex): Promise<void>;
  down(db: Knex): Promise<void>;
}

/** A service's schema and its ordered migration list (`db/migrations.ts`). */
export interface SchemaSpec {
  schema: string;
  migrations: Migration[];
}

const TABLE = "knex_migrations";
const LOCK_TABLE = `${TABLE}_lock`;

function migrationSource(migrations: Migration[]): Knex.MigrationSource<Migration> {
  return {
    getMigrations: async () => migrations,
    getMigrationName: (m) => m.name,
    getMigration: async (m) => ({ up: (db: Knex) => m.up(db), down: (db: Knex) => m.down(db) }),
  };
}

/**
 * Runs `fn` holding a session-level advisory lock named after `schema` on a connection of its
 * own (so `db` needs a pool of at least 2). Postgres drops the lock with the session, so a
 * runner killed mid-way never leaves it held.
 */
async function withSchemaLock<T>(db: Knex, schema: string, fn: () => Promise<T>): Promise<T> {
  const key = `redline.migrate.${schema}`;
  const conn = await db.client.acquireConnection();
  try {
    await db.raw("select pg_advisory_lock(hashtext(?))", [key]).connection(conn);
    try {
      return await fn();
    } finally {
      await db.raw("select pg_advisory_unlock(hashtext(?))", [key]).connection(conn);
    }
  } finally {
    await db.client.releaseConnection(conn);
  }
}

/**
 * Creates the schema if needed and applies pending migrations, each in its own transaction;
 * returns the names applied (empty when the schema was current). Runners on the same schema
 * wait for each other (advisory lock) instead of failing on knex's lock table; a knex lock left
 * set by a runner killed mid-migration is freed (its migration rolled back with its session).
 */
export async function migrateLatest(
  db: Knex,
  schema: string,
  migrations: Migration[],
  log?: Logger,
): Promise<string[]> {
  return withSchemaLock(db, schema, async () => {
    await db.raw("create schema if not exists ??", [schema]);
    if (await db.schema.withSchema(schema).hasTable(LOCK_TABLE)) {
      const freed = await db.withSchema(schema).table(LOCK_TABLE).where({ is_locked: 1 }).update({ is_locked: 0 });
      if (freed > 0) log?.warn({ schema }, `schema "${schema}": freed the migration lock of an interrupted run`);
    }
    const [, applied] = (await db.migrate.latest({
      migrationSource: migrationSource(migrations),
      schemaName: schema,
      tableName: TABLE,
    })) as [number, string[]];
    return applied;
  });
}

/** Rolls back every migration of the schema (used by the migration tests). */
export async function migrateDown(db: Knex, schema: string, migrations: Migration[]): Promise<void> {
  await withSchemaLock(db, schema, () =>
    db.migrate.rollback({ migrationSource: migrationSource(migrations), schemaName: schema, tableName: TABLE }, true),
  );
}

/**
 * Names of `migrations` not recorded as applied in `<schema>.knex_migrations`, in list order
 * (all of them when the schema or the table does not exist). Reads only; creates nothing.
 */
export async function pendingMigrations(db: Knex, schema: string, migrations: Migration[]): Promise<string[]> {
  const exists = await db.schema.withSchema(schema).hasTable(TABLE);
  if (!exists) return migrations.map((m) => m.name);
  const applied = new Set<string>(await db.withSchema(schema).table(TABLE).pluck("name"));
  return migrations.filter((m) => !applied.has(m.name)).map((m) => m.name);
}

/** A service's schema lacks migrations of its code: the `migrate` command has not run. */
export class SchemaOutOfDateError extends Error {
  constructor(
    readonly schema: string,
    readonly missing: string[],
  ) {
    const n = missing.length;
    super(
      `schema "${schema}" is missing ${n} migration${n === 1 ? "" : "s"} (${missing.join(", ")}): ` +
        `run this service with the argument "migrate" first (node dist/main.js migrate; pnpm start does it)`,
    );
    this.name = "SchemaOutOfDateError";
  }
}

/** Throws SchemaOutOfDateError naming the missing migrations when any is pending; reads only. */
export async function verifySchema(db: Knex, schema: string, migrations: Migration[]): Promise<void> {
  const missing = await pendingMigrations(db, schema, migrations);
  if (missing.length > 0) throw new SchemaOutOfDateError(schema, missing);
}
