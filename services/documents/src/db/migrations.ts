// Documents schema migrations: immutable, timestamped, each with up and down.
import type { Knex, Migration } from "@redline/service-kit";

export const SCHEMA = "documents";

export const migrations: Migration[] = [
  {
    name: "20261121T0900_documents_versions_chunks_outbox",
    async up(db: Knex) {
      // A schema builder accumulates statements, so each table gets a fresh one.
      const s = () => db.schema.withSchema(SCHEMA);
      await s().createTable("documents", (t) => {
        t.uuid("id").primary();
        t.text("owner_id").notNullable();
        t.text("title").notNullable();
        t.jsonb("page_setup").nullable();
        t.uuid("head_version_id").notNullable();
        t.integer("head_seq").notNullable();
        // Kept up to date by every commit so metadata reads never scan the chunks.
        t.integer("chunk_count").notNullable().defaultTo(0);
        t.integer("section_count").notNullable().defaultTo(0);
        t.timestamp("archived_at", { useTz: true }).nullable();
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.timestamp("updated_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.index(["owner_id", "updated_at"]);
      });
      await s().createTable("versions", (t) => {
        t.uuid("id").primary();
        t.uuid("document_id").notNullable().references("id").inTable(`${SCHEMA}.documents`).onDelete("CASCADE");
        t.integer("seq").notNullable();
        t.uuid("parent_id").nullable();
        t.text("session_id").notNullable().defaultTo("");
        t.text("kind").notNullable();
        t.text("summary").notNullable().defaultTo("");
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.unique(["document_id", "seq"]);
      });
      await s().createTable("chunk_revisions", (t) => {
        t.uuid("document_id").notNullable().references("id").inTable(`${SCHEMA}.documents`).onDelete("CASCADE");
        t.text("chunk_id").notNullable();
        // Fractional-index keys compare bytewise, so the column uses the C collation.
        t.specificType("position", 'text collate "C"').notNullable();
        t.text("html").notNullable();
        t.integer("valid_from").notNullable();
        t.integer("valid_to").nullable();
        t.index(["document_id", "valid_from"]);
      });
      // Head reads and anchor lookups touch only live rows.
      await db.raw(
        `create unique index chunk_revisions_live_chunk on ${SCHEMA}.chunk_revisions (document_id, chunk_id) where valid_to is null`,
      );
      await db.raw(
        `create index chunk_revisions_live_position on ${SCHEMA}.chunk_revisions (document_id, position) where valid_to is null`,
      );
      await s().createTable("outbox", (t) => {
        t.bigIncrements("id").primary();
        t.text("event_type").notNullable();
        t.text("owner_id").notNullable();
        t.uuid("document_id").notNullable();
        t.uuid("version_id").notNullable();
        t.text("session_id").notNullable().defaultTo("");
        t.jsonb("payload").notNullable();
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.timestamp("published_at", { useTz: true }).nullable();
      });
      await db.raw(`create index outbox_unpublished on ${SCHEMA}.outbox (id) where published_at is null`);
    },
    async down(db: Knex) {
      for (const table of ["outbox", "chunk_revisions", "versions", "documents"]) {
        await db.schema.withSchema(SCHEMA).dropTableIfExists(table);
      }
    },
  },
  {
    name: "20261121T1000_conflicts_and_event_feed",
    async up(db: Knex) {
      // Concurrent writes to one chunk: the write that lost, kept until a re-edit resolves it.
      await db.schema.withSchema(SCHEMA).createTable("conflicts", (t) => {
        t.uuid("id").primary();
        t.text("owner_id").notNullable();
        t.uuid("document_id").notNullable().references("id").inTable(`${SCHEMA}.documents`).onDelete("CASCADE");
        t.text("chunk_id").notNullable();
        t.text("kind").notNullable();
        t.text("session_id").notNullable().defaultTo("");
        t.text("base_html").notNullable();
        t.text("ours_html").notNullable();
        t.text("theirs_html").notNullable();
        t.uuid("base_version_id").notNullable();
        t.uuid("head_version_id").notNullable();
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.timestamp("resolved_at", { useTz: true }).nullable();
        t.uuid("resolved_version_id").nullable();
      });
      await db.raw(
        `create index conflicts_open on ${SCHEMA}.conflicts (document_id, chunk_id) where resolved_at is null`,
      );
      // The doc-events poll reads one session's documents after a cursor.
      await db.raw(`create index outbox_document_id on ${SCHEMA}.outbox (document_id, id)`);
      // The Files view lists active or archived documents of an owner by recency.
      await db.raw(
        `create index documents_owner_archived_updated on ${SCHEMA}.documents (owner_id, (archived_at is null), updated_at desc, id)`,
      );
    },
    async down(db: Knex) {
      await db.raw(`drop index if exists ${SCHEMA}.documents_owner_archived_updated`);
      await db.raw(`drop index if exists ${SCHEMA}.outbox_document_id`);
      await db.schema.withSchema(SCHEMA).dropTableIfExists("conflicts");
    },
  },
  {
    name: "20261121T1100_version_idempotency_keys",
    async up(db: Knex) {
      // A job that lost its worker after committing must not commit its turn a second time.
      await db.schema.withSchema(SCHEMA).alterTable("versions", (t) => {
        t.text("idempotency_key").nullable();
      });
      await db.raw(
        `create unique index versions_idempotency_key on ${SCHEMA}.versions (document_id, idempotency_key) where idempotency_key is not null`,
      );
    },
    async down(db: Knex) {
      await db.raw(`drop index if exists ${SCHEMA}.versions_idempotency_key`);
      await db.schema.withSchema(SCHEMA).alterTable("versions", (t) => {
        t.dropColumn("idempotency_key");
      });
    },
  },
  {
    name: "20261124T0100_outbox_traceparent",
    async up(db: Knex) {
      // The W3C traceparent of the write that created the event, so the relay's publish (later,
      // in another loop) joins that write's trace and consumers can continue it.
      await db.schema.withSchema(SCHEMA).alterTable("outbox", (t) => {
        t.text("traceparent").nullable();
      });
    },
    async down(db: Knex) {
      await db.schema.withSchema(SCHEMA).alterTable("outbox", (t) => {
        t.dropColumn("traceparent");
      });
    },
  },
  {
    name: "20261205T0900_document_sources",
    async up(db: Knex) {
      // The original file a document was loaded from (ingest keeps it; issue #12) and the
      // version it was loaded at: an export writes chunks unchanged since then back as the
      // original's bytes. Null for documents created in Redline.
      await db.schema.withSchema(SCHEMA).alterTable("documents", (t) => {
        t.text("source_id").nullable();
        t.text("source_format").nullable();
        t.integer("source_seq").nullable();
      });
    },
    async down(db: Knex) {
      await db.schema.withSchema(SCHEMA).alterTable("documents", (t) => {
        t.dropColumn("source_seq");
        t.dropColumn("source_format");
        t.dropColumn("source_id");
      });
    },
  },
  {
    name: "20261205T1000_version_authors",
    async up(db: Knex) {
      // Who made each version, as people read it: what a tracked-changes export writes as the
      // revision's author. Versions written before this were not attributed: "unknown", shown
      // as "Redline".
      await db.schema.withSchema(SCHEMA).alterTable("versions", (t) => {
        t.text("author").notNullable().defaultTo("Redline");
        t.text("author_kind").notNullable().defaultTo("unknown");
      });
    },
    async down(db: Knex) {
      await db.schema.withSchema(SCHEMA).alterTable("versions", (t) => {
        t.dropColumn("author");
        t.dropColumn("author_kind");
      });
    },
  },
  {
    name: "20261211T0900_version_writers",
    async up(db: Knex) {
      // Which kind of commit wrote a version ("save" or "chat"; null for loads, replaces and
      // versions written before this): a save based on the session's last-seen record does not
      // clash with the session's own saves since, one of which may have lost its answer.
      await db.schema.withSchema(SCHEMA).alterTable("versions", (t) => {
        t.text("writer").nullable();
      });
    },
    async down(db: Knex) {
      await db.schema.withSchema(SCHEMA).alterTable("versions", (t) => {
        t.dropColumn("writer");
      });
    },
  },
  {
    name: "20261212T0900_document_source_refs",
    async up(db: Knex) {
      // Ingest's retention sweep asks which originals an owner's documents still name
      // (FindSourceReferences): one index probe per id instead of a scan of the owner's documents.
      await db.raw(
        `create index documents_owner_source on ${SCHEMA}.documents (owner_id, source_id) where source_id is not null`,
      );
    },
    async down(db: Knex) {
      await db.raw(`drop index if exists ${SCHEMA}.documents_owner_source`);
    },
  },
];
