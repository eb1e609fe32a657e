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

describe("sessions: session ids per owner (20261123T2000)", () => {
  it("keeps sessions written under global ids, then lets two owners share an id", async () => {
    const url = await createTestDatabase(inject("infra").databaseUrl, "migrate_session_scope");
    const db = createDb(url, sessions.SCHEMA);
    const S = sessions.SCHEMA;
    const before = sessions.migrations.filter((m) => m.name < "20261123T2000");
    try {
      await migrateLatest(db, S, before);
      // A session as the old schema stored it, with a row in every table that hangs off it.
      await db(`${S}.sessions`).insert({ id: "alpha", owner_id: "ann", next_turn_index: 1 });
      await db(`${S}.roster`).insert({ session_id: "alpha", slot_id: "primary", position: 0, focused: true });
      await db(`${S}.messages`).insert({
        id: "00000000-0000-4000-8000-000000000001",
        session_id: "alpha",
        turn_index: 0,
        sender: "user",
        content: "hello",
      });
      await db(`${S}.editor_actions`).insert({ session_id: "alpha", action: "font", value: "Arial" });
      await db(`${S}.reverts`).insert({ id: "rc_1", session_id: "alpha", turn_index: 0, message_ids: "[]" });

      await migrateLatest(db, S, sessions.migrations);
      for (const table of ["roster", "messages", "editor_actions", "reverts"]) {
        expect(await db(`${S}.${table}`).pluck("owner_id"), table).toEqual(["ann"]);
      }
      // Another owner's "alpha" is a separate session with its own slot "primary".
      await db(`${S}.sessions`).insert({ id: "alpha", owner_id: "ben" });
      await db(`${S}.roster`).insert({ owner_id: "ben", session_id: "alpha", slot_id: "primary", position: 0 });
      // A child row must name an existing (owner, session) pair.
      await expect(
        db(`${S}.roster`).insert({ owner_id: "eve", session_id: "alpha", slot_id: "primary", position: 0 }),
      ).rejects.toThrow(/foreign key/);
      // Deleting one owner's session cascades to its rows only.
      await db(`${S}.sessions`).where({ owner_id: "ann", id: "alpha" }).delete();
      expect(await db(`${S}.roster`).pluck("owner_id")).toEqual(["ben"]);
      expect(await db(`${S}.messages`).count<{ count: string }[]>("* as count")).toEqual([{ count: "0" }]);

      // Down refuses while an id is shared, and works once it is not.
      await db(`${S}.sessions`).insert({ id: "alpha", owner_id: "ann" });
      await expect(migrateDown(db, S, sessions.migrations)).rejects.toThrow(/several owners/);
      await db(`${S}.sessions`).where({ owner_id: "ann", id: "alpha" }).delete();
      await migrateDown(db, S, sessions.migrations);
    } finally {
      await db.destroy();
    }
  });
});
