// Ingest schema migrations: immutable, timestamped, each with up and down.
import type { Knex, Migration } from "@redline/service-kit";

export const SCHEMA = "ingest";

export const migrations: Migration[] = [
  {
    name: "20261121T1000_media_uploads_attachments_templates_exports",
    async up(db: Knex) {
      // A schema builder accumulates statements, so each table gets a fresh one.
      const s = () => db.schema.withSchema(SCHEMA);
      // Images taken out of converted HTML, keyed by content hash per owner (served as /v1/media/{id}).
      await s().createTable("media", (t) => {
        t.text("owner_id").notNullable();
        t.text("id").notNullable();
        t.text("content_type").notNullable();
        t.integer("size_bytes").notNullable();
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.primary(["owner_id", "id"]);
      });
      await s().createTable("uploads", (t) => {
        t.text("id").primary();
        t.text("owner_id").notNullable();
        t.text("filename").notNullable();
        t.text("content_type").notNullable();
        t.bigInteger("size_bytes").notNullable();
        t.text("purpose").notNullable();
        t.text("object_key").notNullable();
        t.timestamp("expires_at", { useTz: true }).notNullable();
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
      });
      await s().createTable("attachments", (t) => {
        t.text("id").primary();
        t.text("owner_id").notNullable();
        t.text("session_id").notNullable();
        t.text("filename").notNullable();
        t.text("content_type").notNullable();
        t.text("kind").notNullable();
        t.bigInteger("size_bytes").notNullable();
        t.text("object_key").notNullable();
        t.text("status").notNullable();
        t.text("error").notNullable().defaultTo("");
        t.integer("text_length").notNullable().defaultTo(0);
        t.integer("chunk_count").notNullable().defaultTo(0);
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.timestamp("updated_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.timestamp("deleted_at", { useTz: true }).nullable();
        t.index(["owner_id", "session_id"]);
      });
      // Extracted text per chunk, searchable with Postgres full-text search.
      await s().createTable("attachment_chunks", (t) => {
        t.text("attachment_id").notNullable().references("id").inTable(`${SCHEMA}.attachments`).onDelete("CASCADE");
        t.integer("seq").notNullable();
        t.text("text").notNullable();
        t.primary(["attachment_id", "seq"]);
      });
      await db.raw(
        `alter table ${SCHEMA}.attachment_chunks add column tsv tsvector generated always as (to_tsvector('simple', text)) stored`,
      );
      await db.raw(`create index attachment_chunks_tsv on ${SCHEMA}.attachment_chunks using gin (tsv)`);
      await s().createTable("templates", (t) => {
        t.text("id").primary();
        t.text("owner_id").notNullable();
        t.text("organization_id").notNullable().defaultTo("");
        t.text("name").notNullable();
        t.text("filename").notNullable();
        t.text("title").notNullable();
        t.text("format").notNullable();
        t.text("html").notNullable();
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.timestamp("deleted_at", { useTz: true }).nullable();
        t.index(["owner_id", "created_at"]);
      });
      await s().createTable("exports", (t) => {
        t.text("id").primary();
        t.text("owner_id").notNullable();
        t.text("session_id").notNullable().defaultTo("");
        t.text("kind").notNullable();
        t.text("format").notNullable();
        t.text("filename").notNullable();
        t.text("recipient_email").notNullable().defaultTo("");
        t.text("status").notNullable();
        t.text("object_key").notNullable().defaultTo("");
        t.text("error").notNullable().defaultTo("");
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.timestamp("updated_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
      });
    },
    async down(db: Knex) {
      for (const table of ["exports", "templates", "attachment_chunks", "attachments", "uploads", "media"])
        await db.schema.withSchema(SCHEMA).dropTableIfExists(table);
    },
  },
  {
    name: "20261123T2000_exports_owner_kind_created_index",
    // The email export cap counts an owner's email exports of the last hour on every request.
    async up(db: Knex) {
      await db.schema.withSchema(SCHEMA).alterTable("exports", (t) => {
        t.index(["owner_id", "kind", "created_at"], "exports_owner_kind_created");
      });
    },
    async down(db: Knex) {
      await db.schema.withSchema(SCHEMA).alterTable("exports", (t) => {
        t.dropIndex(["owner_id", "kind", "created_at"], "exports_owner_kind_created");
      });
    },
  },
  {
    name: "20261201T0900_attachments_owner_created_index",
    // GET /v1/jobs lists an owner's attachment jobs newest first, across their sessions.
    async up(db: Knex) {
      await db.schema.withSchema(SCHEMA).alterTable("attachments", (t) => {
        t.index(["owner_id", "created_at"], "attachments_owner_created");
      });
    },
    async down(db: Knex) {
      await db.schema.withSchema(SCHEMA).alterTable("attachments", (t) => {
        t.dropIndex(["owner_id", "created_at"], "attachments_owner_created");
      });
    },
  },
  {
    name: "20261205T0900_document_sources",
    // A loaded document's original file (issue #12): the bytes and the chunk map live in the
    // object store under the owner's prefix; the row says whose they are and where.
    async up(db: Knex) {
      await db.schema.withSchema(SCHEMA).createTable("document_sources", (t) => {
        t.text("id").primary();
        t.text("owner_id").notNullable();
        t.text("format").notNullable();
        t.text("filename").notNullable();
        t.bigInteger("size_bytes").notNullable();
        t.text("object_key").notNullable();
        t.text("map_key").notNullable();
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.index(["owner_id", "created_at"], "document_sources_owner_created");
      });
    },
    async down(db: Knex) {
      await db.schema.withSchema(SCHEMA).dropTableIfExists("document_sources");
    },
  },
  {
    name: "20261210T0900_file_retention",
    // The expired-file sweep (commands/retention.ts) removes expired upload slots' objects with
    // their rows, and records when it removed a stored export's or a deleted attachment's object.
    async up(db: Knex) {
      const s = () => db.schema.withSchema(SCHEMA);
      await s().alterTable("exports", (t) => {
        t.timestamp("object_removed_at", { useTz: true }).nullable();
      });
      await s().alterTable("attachments", (t) => {
        t.timestamp("object_removed_at", { useTz: true }).nullable();
      });
      await s().alterTable("uploads", (t) => {
        t.index(["expires_at"], "uploads_expires");
      });
      // Each pass reads only the rows whose object is still stored: a few days' worth, however
      // long the tables grow.
      await db.raw(
        `create index exports_objects_stored on ${SCHEMA}.exports (created_at) where object_key <> '' and object_removed_at is null`,
      );
      await db.raw(
        `create index attachments_deleted_objects_stored on ${SCHEMA}.attachments (deleted_at) where deleted_at is not null and object_removed_at is null`,
      );
    },
    async down(db: Knex) {
      await db.raw(`drop index if exists ${SCHEMA}.exports_objects_stored`);
      await db.raw(`drop index if exists ${SCHEMA}.attachments_deleted_objects_stored`);
      const s = () => db.schema.withSchema(SCHEMA);
      await s().alterTable("uploads", (t) => {
        t.dropIndex(["expires_at"], "uploads_expires");
      });
      await s().alterTable("attachments", (t) => {
        t.dropColumn("object_removed_at");
      });
      await s().alterTable("exports", (t) => {
        t.dropColumn("object_removed_at");
      });
    },
  },
  {
    name: "20261212T0900_source_retention",
    // The sweep also removes originals no document names (a load that failed after storing one, a
    // retried upload, a document reloaded from another file): each is checked with documents once
    // it is a day old, and a referenced one again a day later (commands/retention.ts).
    async up(db: Knex) {
      await db.schema.withSchema(SCHEMA).alterTable("document_sources", (t) => {
        t.timestamp("checked_at", { useTz: true }).nullable();
      });
      await db.raw(
        `create index document_sources_check on ${SCHEMA}.document_sources (checked_at asc nulls first, created_at)`,
      );
    },
    async down(db: Knex) {
      await db.raw(`drop index if exists ${SCHEMA}.document_sources_check`);
      await db.schema.withSchema(SCHEMA).alterTable("document_sources", (t) => {
        t.dropColumn("checked_at");
      });
    },
  },
];
