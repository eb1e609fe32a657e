// Sessions schema migrations: immutable, timestamped, each with up and down.
import type { Knex, Migration } from "@redline/service-kit";

export const SCHEMA = "sessions";
/** Tables that hang off a session by `session_id` (the owner-scope migration). */
const CHILDREN = ["roster", "messages", "editor_actions", "reverts"] as const;

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
  {
    name: "20261123T2000_session_ids_per_owner",
    async up(db: Knex) {
      // Every child row learns its session's owner, so (owner_id, session_id) names the session.
      for (const table of CHILDREN) {
        await db.raw(`alter table ${SCHEMA}.${table} add column owner_id text`);
        await db.raw(
          `update ${SCHEMA}.${table} c set owner_id = s.owner_id from ${SCHEMA}.sessions s where s.id = c.session_id`,
        );
        await db.raw(`alter table ${SCHEMA}.${table} alter column owner_id set not null`);
        await db.raw(`alter table ${SCHEMA}.${table} drop constraint if exists ${table}_session_id_foreign`);
      }
      // Two owners may now each have a session "alpha": the key is (owner_id, id).
      await db.raw(`alter table ${SCHEMA}.sessions drop constraint sessions_pkey`);
      await db.raw(`alter table ${SCHEMA}.sessions add constraint sessions_pkey primary key (owner_id, id)`);
      await db.raw(`alter table ${SCHEMA}.roster drop constraint roster_pkey`);
      await db.raw(
        `alter table ${SCHEMA}.roster add constraint roster_pkey primary key (owner_id, session_id, slot_id)`,
      );
      for (const table of CHILDREN) {
        await db.raw(
          `alter table ${SCHEMA}.${table} add constraint ${table}_session_foreign foreign key (owner_id, session_id)
             references ${SCHEMA}.sessions (owner_id, id) on delete cascade`,
        );
      }
      await db.raw(`drop index if exists ${SCHEMA}.messages_session_id_turn_index_index`);
      await db.raw(`create index messages_session_turn on ${SCHEMA}.messages (owner_id, session_id, turn_index)`);
      await db.raw(`drop index if exists ${SCHEMA}.editor_actions_session_id_id_index`);
      await db.raw(`create index editor_actions_session on ${SCHEMA}.editor_actions (owner_id, session_id, id)`);
      await db.raw(`drop index if exists ${SCHEMA}.reverts_session_id_created_at_index`);
      await db.raw(`create index reverts_session on ${SCHEMA}.reverts (owner_id, session_id, created_at)`);
    },
    async down(db: Knex) {
      // Going back to global ids is only possible while no id is used by two owners.
      const [dup] = (
        await db.raw<{ rows: { id: string }[] }>(
          `select id from ${SCHEMA}.sessions group by id having count(*) > 1 limit 1`,
        )
      ).rows;
      if (dup) throw new Error(`session id "${dup.id}" belongs to several owners; cannot make ids global again`);
      await db.raw(`drop index if exists ${SCHEMA}.reverts_session`);
      await db.raw(`create index reverts_session_id_created_at_index on ${SCHEMA}.reverts (session_id, created_at)`);
      await db.raw(`drop index if exists ${SCHEMA}.editor_actions_session`);
      await db.raw(`create index editor_actions_session_id_id_index on ${SCHEMA}.editor_actions (session_id, id)`);
      await db.raw(`drop index if exists ${SCHEMA}.messages_session_turn`);
      await db.raw(`create index messages_session_id_turn_index_index on ${SCHEMA}.messages (session_id, turn_index)`);
      for (const table of CHILDREN)
        await db.raw(`alter table ${SCHEMA}.${table} drop constraint ${table}_session_foreign`);
      await db.raw(`alter table ${SCHEMA}.roster drop constraint roster_pkey`);
      await db.raw(`alter table ${SCHEMA}.roster add constraint roster_pkey primary key (session_id, slot_id)`);
      await db.raw(`alter table ${SCHEMA}.sessions drop constraint sessions_pkey`);
      await db.raw(`alter table ${SCHEMA}.sessions add constraint sessions_pkey primary key (id)`);
      for (const table of CHILDREN) {
        await db.raw(
          `alter table ${SCHEMA}.${table} add constraint ${table}_session_id_foreign foreign key (session_id)
             references ${SCHEMA}.sessions (id) on delete cascade`,
        );
        await db.raw(`alter table ${SCHEMA}.${table} drop column owner_id`);
      }
    },
  },
  {
    name: "20261206T0900_turn_keys",
    // Issue #10: AppendTurn is idempotent per turn key (the agent's charge key), so the agent may
    // retry it after sessions died mid-call; the unique index makes a racing replay fail whole.
    async up(db: Knex) {
      await db.raw(`alter table ${SCHEMA}.messages add column turn_key text`);
      await db.raw(
        `create unique index messages_turn_key on ${SCHEMA}.messages (owner_id, session_id, turn_key, sender)
          where turn_key is not null`,
      );
    },
    async down(db: Knex) {
      await db.raw(`drop index if exists ${SCHEMA}.messages_turn_key`);
      await db.raw(`alter table ${SCHEMA}.messages drop column turn_key`);
    },
  },
  {
    name: "20261207T0900_webhooks",
    // Issue #35: outbound webhooks. Endpoints (with the signing secret they are created with),
    // the deliveries outbox (one row per endpoint and event: the unique key makes the enqueue
    // exactly-once however often JetStream redelivers) and each delivery's attempts.
    async up(db: Knex) {
      const s = () => db.schema.withSchema(SCHEMA);
      await s().createTable("webhook_endpoints", (t) => {
        t.text("id").primary();
        t.text("owner_id").notNullable();
        t.text("url").notNullable();
        t.specificType("events", "text[]").notNullable();
        t.text("description").notNullable().defaultTo("");
        // whsec_ + base64; kept in the clear because every delivery is signed with it.
        t.text("secret").notNullable();
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.index(["owner_id", "created_at"]);
      });
      await s().createTable("webhook_deliveries", (t) => {
        t.text("id").primary();
        t.text("endpoint_id").notNullable().references("id").inTable(`${SCHEMA}.webhook_endpoints`).onDelete("CASCADE");
        t.text("owner_id").notNullable();
        // The event's JetStream message id (event-contracts): the same event redelivered has the same one.
        t.text("event_id").notNullable();
        t.text("event_type").notNullable();
        // The exact JSON body POSTed on every attempt: {type, timestamp, data}.
        t.text("body").notNullable();
        t.text("status").notNullable().defaultTo("pending");
        t.integer("attempts").notNullable().defaultTo(0);
        t.integer("last_response_code").nullable();
        t.text("last_error").nullable();
        t.timestamp("next_attempt_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        // A worker's lease on the row while it delivers: replicas skip leased rows.
        t.timestamp("lease_expires_at", { useTz: true }).nullable();
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.timestamp("delivered_at", { useTz: true }).nullable();
        t.unique(["endpoint_id", "event_id"]);
        t.index(["endpoint_id", "created_at"]);
      });
      await db.raw(
        `create index webhook_deliveries_due on ${SCHEMA}.webhook_deliveries (next_attempt_at) where status = 'pending'`,
      );
      await s().createTable("webhook_attempts", (t) => {
        t.bigIncrements("id").primary();
        t.text("delivery_id")
          .notNullable()
          .references("id")
          .inTable(`${SCHEMA}.webhook_deliveries`)
          .onDelete("CASCADE");
        t.integer("response_code").nullable();
        t.text("error").nullable();
        t.integer("duration_ms").notNullable();
        t.timestamp("attempted_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.index(["delivery_id"]);
      });
    },
    async down(db: Knex) {
      for (const table of ["webhook_attempts", "webhook_deliveries", "webhook_endpoints"])
        await db.schema.withSchema(SCHEMA).dropTableIfExists(table);
    },
  },
];
