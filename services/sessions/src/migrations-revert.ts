// Sessions schema migrations of revert and redo-revert (listed in migrations.ts).
import type { Knex, Migration } from "@redline/service-kit";

const SCHEMA = "sessions";

export const revertMigrations: Migration[] = [
  {
    name: "20261121T1100_reverts",
    async up(db: Knex) {
      await db.schema.withSchema(SCHEMA).createTable("reverts", (t) => {
        // The redo_checkpoint_id handed to the caller.
        t.text("id").primary();
        t.text("session_id").notNullable().references("id").inTable(`${SCHEMA}.sessions`).onDelete("CASCADE");
        t.integer("turn_index").notNullable();
        // Messages the revert deactivated, so redo reactivates exactly those.
        t.jsonb("message_ids").notNullable();
        t.jsonb("closed_slot_ids").notNullable().defaultTo("[]");
        // [{document_id, from_version_id, to_version_id}] restored by the agent.
        t.jsonb("restored").notNullable().defaultTo("[]");
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.timestamp("undone_at", { useTz: true }).nullable();
        t.index(["session_id", "created_at"]);
      });
    },
    async down(db: Knex) {
      await db.schema.withSchema(SCHEMA).dropTableIfExists("reverts");
    },
  },
];
