// Sessions schema migrations: immutable, timestamped, each with up and down.
import type { Knex, Migration } from "@redline/service-kit";
import { ownerScopeMigrations } from "./migrations-owner-scope.js";
import { revertMigrations } from "./migrations-revert.js";

export const SCHEMA = "sessions";

export const migrations: Migration[] = [
  {
    name: "20261121T0900_sessions_roster_messages",
    async up(db: Knex) {
      // A schema builder accumulates statements, so each table gets a fresh one.
      const s = () => db.schema.withSchema(SCHEMA);
      await s().createTable("sessions", (t) => {
        // Caller-chosen ids are global: a second owner asking for a taken id is refused.
        t.text("id").primary();
        t.text("owner_id").notNullable();
        t.text("title").notNullable().defaultTo("");
        t.integer("next_turn_index").notNullable().defaultTo(0);
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.timestamp("updated_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.index(["owner_id", "updated_at"]);
      });
      await s().createTable("roster", (t) => {
        t.text("session_id").notNullable().references("id").inTable(`${SCHEMA}.sessions`).onDelete("CASCADE");
        t.text("slot_id").notNullable();
        t.uuid("document_id").nullable();
        t.text("title").notNullable().defaultTo("");
        t.boolean("focused").notNullable().defaultTo(false);
        t.integer("position").notNullable();
        t.text("last_seen_version_id").notNullable().defaultTo("");
        t.timestamp("opened_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.timestamp("closed_at", { useTz: true }).nullable();
        t.primary(["session_id", "slot_id"]);
        t.index(["document_id"]);
      });
      await s().createTable("messages", (t) => {
        t.uuid("id").primary();
        t.text("session_id").notNullable().references("id").inTable(`${SCHEMA}.sessions`).onDelete("CASCADE");
        t.integer("turn_index").notNullable();
        t.text("sender").notNullable();
        t.text("content").notNullable();
        t.text("checkpoint_id").notNullable().defaultTo("");
        t.boolean("active").notNullable().defaultTo(true);
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.index(["session_id", "turn_index"]);
      });
    },
    async down(db: Knex) {
      for (const table of ["messages", "roster", "sessions"])
        await db.schema.withSchema(SCHEMA).dropTableIfExists(table);
    },
  },
  {
    name: "20261121T1000_workspace_editor_actions_memory",
    async up(db: Knex) {
      const s = () => db.schema.withSchema(SCHEMA);
      // Why a slot closed: "closed" by the user, or "archived" (unlinked by an archive; the
      // session still receives that document's events so it learns of the archive).
      await s().alterTable("roster", (t) => {
        t.text("closed_reason").nullable();
      });
      await db.raw(`create index roster_open_document on ${SCHEMA}.roster (document_id) where closed_at is null`);
      await s().createTable("editor_actions", (t) => {
        t.bigIncrements("id").primary();
        t.text("session_id").notNullable().references("id").inTable(`${SCHEMA}.sessions`).onDelete("CASCADE");
        t.text("action").notNullable();
        t.text("value").notNullable().defaultTo("");
        t.text("document_id").notNullable().defaultTo("");
        t.jsonb("chunk_ids").notNullable().defaultTo("[]");
        t.jsonb("details").nullable();
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.index(["session_id", "id"]);
      });
      // One note per owner and key; key "" is the account-level note.
      await s().createTable("memory_notes", (t) => {
        t.text("owner_id").notNullable();
        t.text("memory_key").notNullable();
        t.text("note").notNullable();
        t.timestamp("updated_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.primary(["owner_id", "memory_key"]);
      });
    },
    async down(db: Knex) {
      await db.schema.withSchema(SCHEMA).dropTableIfExists("memory_notes");
      await db.schema.withSchema(SCHEMA).dropTableIfExists("editor_actions");
      await db.raw(`drop index if exists ${SCHEMA}.roster_open_document`);
      await db.schema.withSchema(SCHEMA).alterTable("roster", (t) => {
        t.dropColumn("closed_reason");
      });
    },
  },
  ...revertMigrations,
  ...ownerScopeMigrations,
];
