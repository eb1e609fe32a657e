// Every service's migrations go up, down and up again on a real database (STYLE practice 9).
import * as agent from "@redline/agent";
import * as billing from "@redline/billing";
import * as documents from "@redline/documents";
import * as ingest from "@redline/ingest";
import { createTestDatabase } from "@redline/local-infra";
import { createDb, migrateDown, migrateLatest } from "@redline/service-kit";
import * as sessions from "@redline/sessions";
import { describe, expect, inject, it } from "vitest";

const services = [
  ["agent", agent],
  ["billing", billing],
  ["documents", documents],
  ["ingest", ingest],
  ["sessions", sessions],
] as const;

describe("migrations", () => {
  for (const [name, service] of services) {
    it(`${name}: up, down and up again`, async () => {
      const url = await createTestDatabase(inject("infra").databaseUrl, `migrate_${name}`);
      const db = createDb(url, service.SCHEMA);
      try {
        const tables = async () =>
          (await db("information_schema.tables").where({ table_schema: service.SCHEMA }).pluck("table_name")).filter(
            (t: string) => !t.startsWith("knex_"),
          );
        await migrateLatest(db, service.SCHEMA, service.migrations);
        const created = await tables();
        expect(created.length).toBeGreaterThan(0);
        await migrateDown(db, service.SCHEMA, service.migrations);
        expect(await tables()).toEqual([]);
        await migrateLatest(db, service.SCHEMA, service.migrations);
        expect((await tables()).sort()).toEqual([...created].sort());
      } finally {
        await db.destroy();
      }
    });
  }
});
