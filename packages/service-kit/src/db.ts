// Postgres through knex: one schema per service, migrations per service, kept in code.
import knexFactory, { type Knex } from "knex";

export type { Knex };

/** One immutable, timestamped migration (name like "20261121T0900_create_documents"). */
export interface Migration {
  name: string;
  up(db: Knex): Promise<void>;
  down(db: Knex): Promise<void>;
}

/** Opens a pool on `url` whose search_path is the service's own schema. */
export function createDb(url: string, schema: string, poolMax = 10): Knex {
  return knexFactory({
    client: "pg",
    connection: url,
    searchPath: [schema, "public"],
    pool: { min: 0, max: poolMax },
  });
}

function migrationSource(migrations: Migration[]): Knex.MigrationSource<Migration> {
  return {
    getMigrations: async () => migrations,
    getMigrationName: (m) => m.name,
    getMigration: async (m) => ({ up: (db: Knex) => m.up(db), down: (db: Knex) => m.down(db) }),
  };
}

/** Creates the schema if needed and applies pending migrations; its own lock table per schema. */
export async function migrateLatest(db: Knex, schema: string, migrations: Migration[]): Promise<void> {
  await db.raw("create schema if not exists ??", [schema]);
  await db.migrate.latest({
    migrationSource: migrationSource(migrations),
    schemaName: schema,
    tableName: "knex_migrations",
  });
}

/** Rolls back every migration of the schema (used by the migration tests). */
export async function migrateDown(db: Knex, schema: string, migrations: Migration[]): Promise<void> {
  await db.migrate.rollback(
    { migrationSource: migrationSource(migrations), schemaName: schema, tableName: "knex_migrations" },
    true,
  );
}

/** Health probe: one round trip. */
export async function pingDb(db: Knex): Promise<void> {
  await db.raw("select 1");
}
