// Test support: a migrated sessions database of its own per test file, on the global-setup Postgres.
import { randomUUID } from "node:crypto";
import { createTestDatabase } from "@redline/local-infra";
import { createDb, type Knex, migrateLatest } from "@redline/service-kit";
import { inject } from "vitest";
import { migrations, SCHEMA } from "./db/migrations.js";

/** A fresh database named after `name`, migrated; its admin URL too (for other services). */
export async function sessionsTestDb(name: string): Promise<{ db: Knex; url: string }> {
  const url = await createTestDatabase(inject("infra").databaseUrl, `sessions_${name}`);
  const db = createDb(url, SCHEMA);
  await migrateLatest(db, SCHEMA, migrations);
  return { db, url };
}

/** An owner id no other test uses, so tests sharing a database never see each other's rows. */
export const newOwner = () => `own_${randomUUID().slice(0, 8)}`;
