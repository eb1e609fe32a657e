// Agent schema migrations: immutable, timestamped, each with up and down.
import type { Knex, Migration } from "@redline/service-kit";

export const SCHEMA = "agent";

export const migrations: Migration[] = [
  {
    name: "20261121T1000_jobs_and_events",
    async up(db: Knex) {
      // A schema builder accumulates statements, so each table gets a fresh one.
      const s = () => db.schema.withSchema(SCHEMA);
      await s().createTable("jobs", (t) => {
        t.text("id").primary();
        t.text("owner_id").notNullable();
        t.text("user_id").nullable();
        t.text("organization_id").nullable();
        // The principal the worker acts as (plan included), so a job runs with its creator's rights.
        t.jsonb("principal").notNullable();
        t.text("session_id").notNullable();
        t.text("job_type").notNullable().defaultTo("chat");
        t.text("status").notNullable();
        t.integer("progress").notNullable().defaultTo(0);
        t.jsonb("request").notNullable();
        t.jsonb("result").nullable();
        t.text("error").nullable();
        t.jsonb("metadata").notNullable().defaultTo("{}");
        // What the worker keeps between phases (staged operations, approvals so far).
        t.jsonb("state").notNullable().defaultTo("{}");
        t.text("charge_key").notNullable();
        t.boolean("cancel_requested").notNullable().defaultTo(false);
        t.text("lease_owner").nullable();
        t.timestamp("lease_expires_at", { useTz: true }).nullable();
        t.timestamp("heartbeat_at", { useTz: true }).nullable();
        t.integer("attempts").notNullable().defaultTo(0);
        t.integer("next_sequence").notNullable().defaultTo(1);
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.timestamp("updated_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.timestamp("completed_at", { useTz: true }).nullable();
        t.index(["owner_id", "created_at"]);
        t.index(["session_id", "created_at"]);
        t.index(["status", "created_at"]);
        t.index(["completed_at"]);
      });
      await s().createTable("job_events", (t) => {
        t.text("job_id").notNullable().references("id").inTable(`${SCHEMA}.jobs`).onDelete("CASCADE");
        t.bigInteger("sequence").notNullable();
        t.text("type").notNullable();
        t.jsonb("data").notNullable();
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.primary(["job_id", "sequence"]);
      });
    },
    async down(db: Knex) {
      for (const table of ["job_events", "jobs"]) await db.schema.withSchema(SCHEMA).dropTableIfExists(table);
    },
  },
  {
    name: "20261124T0100_jobs_traceparent",
    async up(db: Knex) {
      // The W3C traceparent of the request that created the job: whichever agent process runs
      // it later continues that trace (null when tracing was off at creation).
      await db.schema.withSchema(SCHEMA).alterTable("jobs", (t) => {
        t.text("traceparent").nullable();
      });
    },
    async down(db: Knex) {
      await db.schema.withSchema(SCHEMA).alterTable("jobs", (t) => {
        t.dropColumn("traceparent");
      });
    },
  },
  {
    name: "20261124T2200_turn_records",
    async up(db: Knex) {
      // The record outbox: a committed sync turn whose settle or AppendTurn did not answer in
      // time. Both are idempotent per charge key, so the relay repeats them until they land.
      await db.schema.withSchema(SCHEMA).createTable("turn_records", (t) => {
        t.text("charge_key").primary();
        // The session the record belongs to: its next turn waits for it (record order is turn order).
        t.text("session_id").nullable();
        t.integer("operations").notNullable();
        // sessions.v1 AppendTurnRequest as ts-proto JSON; null for a turn with no session record (re-edit).
        t.jsonb("append_request").nullable();
        t.jsonb("principal").notNullable();
        t.text("request_id").notNullable();
        t.text("traceparent").nullable();
        t.integer("attempts").notNullable().defaultTo(0);
        t.text("last_error").nullable();
        t.timestamp("next_attempt_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.index(["next_attempt_at"]);
        t.index(["session_id"]);
      });
    },
    async down(db: Knex) {
      await db.schema.withSchema(SCHEMA).dropTableIfExists("turn_records");
    },
  },
  {
    name: "20261202T1400_job_outbox",
    async up(db: Knex) {
      // Job lifecycle events (completed, failed, awaiting approval) written by the status change's
      // own statement and relayed to JetStream (jobs/lifecycle-relay.ts). No foreign key: the
      // event outlives the job's cleanup until it is published.
      await db.schema.withSchema(SCHEMA).createTable("job_outbox", (t) => {
        t.bigIncrements("id").primary();
        t.text("job_id").notNullable();
        t.text("owner_id").notNullable();
        t.text("session_id").notNullable();
        t.text("status").notNullable();
        t.text("error").nullable();
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.timestamp("published_at", { useTz: true }).nullable();
      });
      await db.raw(`create index job_outbox_unpublished on ${SCHEMA}.job_outbox (id) where published_at is null`);
    },
    async down(db: Knex) {
      await db.schema.withSchema(SCHEMA).dropTableIfExists("job_outbox");
    },
  },
];
