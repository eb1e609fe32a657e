// Unit tests' database: a fresh, migrated database per test file on the global setup's Postgres.
import { createTestDatabase } from "@redline/local-infra";
import { createDb, type Knex, migrateLatest } from "@redline/service-kit";
import { inject } from "vitest";
import { migrations, SCHEMA } from "./migrations.js";

/** A migrated database of its own for one test file (`name` prefixes the database name); destroy it in afterAll. */
export async function migratedTestDb(name: string): Promise<Knex> {
  const url = await createTestDatabase(inject("infra").databaseUrl, name);
  const db = createDb(url, SCHEMA, 4);
  await migrateLatest(db, SCHEMA, migrations);
  return db;
}
