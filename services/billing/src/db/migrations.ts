// Billing schema migrations: immutable, timestamped, each with up and down.
import type { Knex, Migration } from "@redline/service-kit";

export const SCHEMA = "billing";

export const migrations: Migration[] = [
  {
    name: "20261121T0900_accounts_keys_usage",
    async up(db: Knex) {
      await db.schema.withSchema(SCHEMA).createTable("accounts", (t) => {
        t.uuid("id").primary();
        t.text("kind").notNullable();
        t.text("name").notNullable();
        t.text("plan").notNullable().defaultTo("free");
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.unique(["kind", "name"]);
      });
      await db.schema.withSchema(SCHEMA).createTable("memberships", (t) => {
        t.uuid("user_id").notNullable().references("id").inTable(`${SCHEMA}.accounts`);
        t.uuid("organization_id").notNullable().references("id").inTable(`${SCHEMA}.accounts`);
        t.primary(["user_id", "organization_id"]);
      });
      await db.schema.withSchema(SCHEMA).createTable("api_keys", (t) => {
        t.uuid("id").primary();
        t.text("key_hash").notNullable().unique();
        t.text("key_prefix").notNullable();
        t.uuid("user_id").notNullable().references("id").inTable(`${SCHEMA}.accounts`);
        t.uuid("organization_id").nullable().references("id").inTable(`${SCHEMA}.accounts`);
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.timestamp("revoked_at", { useTz: true }).nullable();
      });
      await db.schema.withSchema(SCHEMA).createTable("usage_periods", (t) => {
        t.uuid("owner_id").notNullable();
        t.date("period_start").notNullable();
        t.integer("ops_used").notNullable().defaultTo(0);
        t.primary(["owner_id", "period_start"]);
      });
      await db.schema.withSchema(SCHEMA).createTable("charges", (t) => {
        t.uuid("owner_id").notNullable();
        t.text("charge_key").notNullable();
        t.date("period_start").notNullable();
        t.integer("ops").notNullable();
        t.text("state").notNullable();
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.primary(["owner_id", "charge_key"]);
      });
    },
    async down(db: Knex) {
      for (const table of ["charges", "usage_periods", "api_keys", "memberships", "accounts"]) {
        await db.schema.withSchema(SCHEMA).dropTableIfExists(table);
      }
    },
  },
  {
    name: "20261201T0900_accounts_email",
    // A user's email on file: email exports without recipient_email go there (PATCH /v1/users/me).
    async up(db: Knex) {
      await db.schema.withSchema(SCHEMA).alterTable("accounts", (t) => {
        t.text("email").nullable();
      });
    },
    async down(db: Knex) {
      await db.schema.withSchema(SCHEMA).alterTable("accounts", (t) => {
        t.dropColumn("email");
      });
    },
  },
  {
    name: "20261202T1000_rate_limits_idempotency",
    // Token buckets of the gateway's rate limits (one row per API key and endpoint class) and the
    // responses kept for Idempotency-Key retries (one row per owner and key, 24 h).
    async up(db: Knex) {
      await db.schema.withSchema(SCHEMA).createTable("rate_limit_buckets", (t) => {
        t.text("subject").notNullable();
        t.text("limiter").notNullable();
        // Fractional: the refill is continuous (capacity / window per second).
        t.double("tokens").notNullable();
        t.boolean("allowed").notNullable();
        t.timestamp("updated_at", { useTz: true }).notNullable();
        t.primary(["subject", "limiter"]);
      });
      await db.schema.withSchema(SCHEMA).createTable("idempotency_records", (t) => {
        t.uuid("owner_id").notNullable();
        t.text("idempotency_key").notNullable();
        t.text("request_hash").notNullable();
        t.text("state").notNullable();
        t.integer("status").nullable();
        t.jsonb("headers").nullable();
        t.binary("body").nullable();
        t.timestamp("created_at", { useTz: true }).notNullable();
        t.timestamp("lease_until", { useTz: true }).notNullable();
        t.timestamp("expires_at", { useTz: true }).notNullable();
        t.primary(["owner_id", "idempotency_key"]);
        t.index(["expires_at"]);
      });
    },
    async down(db: Knex) {
      await db.schema.withSchema(SCHEMA).dropTableIfExists("idempotency_records");
      await db.schema.withSchema(SCHEMA).dropTableIfExists("rate_limit_buckets");
    },
  },
];
