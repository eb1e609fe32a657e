// Test support: a fresh, migrated billing database per test file on the run's shared Postgres
// (test/global-setup.ts), so unit tests exercise the real SQL.
import { createTestDatabase } from "@redline/local-infra";
import { createDb, type Knex, migrateLatest } from "@redline/service-kit";
import { inject } from "vitest";
import { migrations, SCHEMA } from "./migrations.js";

/** A pool on a new database named after `prefix`, migrated to the latest billing schema. */
export async function openTestDb(prefix: string): Promise<Knex> {
  const url = await createTestDatabase(inject("infra").databaseUrl, prefix);
  const db = createDb(url, SCHEMA);
  await migrateLatest(db, SCHEMA, migrations);
  return db;
}
