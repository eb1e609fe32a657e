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
    name: "20261202T0900_buckets_promotions_cycles",
    // Issue #13 part 1: promotion codes and the grants they give, the buckets a charge drew from,
    // and each account's billing cycle (anchor day) and enterprise limit.
    async up(db: Knex) {
      await db.schema.withSchema(SCHEMA).alterTable("accounts", (t) => {
        // null = the day the account was created; existing accounts keep calendar months (1).
        t.smallint("anchor_day").nullable();
        // Custom monthly limit (enterprise); null = the plan's.
        t.integer("monthly_limit").nullable();
      });
      await db(`${SCHEMA}.accounts`).update({ anchor_day: 1 });
      await db.schema.withSchema(SCHEMA).createTable("promotions", (t) => {
        t.uuid("id").primary();
        t.text("code").notNullable();
        t.text("name").notNullable();
        t.integer("ops").notNullable();
        t.timestamp("expires_at", { useTz: true }).notNullable();
        t.integer("max_redemptions").nullable();
        t.integer("redemptions").notNullable().defaultTo(0);
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
      });
      // Codes compare case-insensitively.
      await db.raw(`create unique index promotions_code_lower on ${SCHEMA}.promotions (lower(code))`);
      await db.schema.withSchema(SCHEMA).createTable("promotion_grants", (t) => {
        t.uuid("id").primary();
        t.uuid("owner_id").notNullable();
        t.uuid("promotion_id").notNullable().references("id").inTable(`${SCHEMA}.promotions`);
        t.text("name").notNullable();
        t.integer("ops_granted").notNullable();
        t.integer("ops_remaining").notNullable();
        t.timestamp("expires_at", { useTz: true }).notNullable();
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        // Once per account.
        t.unique(["owner_id", "promotion_id"]);
        t.index(["owner_id", "expires_at"]);
      });
      await db.raw(
        `alter table ${SCHEMA}.promotion_grants add constraint promotion_grants_remaining
           check (ops_remaining >= 0 and ops_remaining <= ops_granted)`,
      );
      await db.schema.withSchema(SCHEMA).alterTable("charges", (t) => {
        // The operations each grant paid: [{redemption_id, ops}]; the rest came from usage_periods.
        t.jsonb("grant_parts").notNullable().defaultTo("[]");
        t.text("bucket_used").notNullable().defaultTo("monthly");
        t.index(["owner_id", "created_at"]);
      });
    },
    async down(db: Knex) {
      await db.schema.withSchema(SCHEMA).alterTable("charges", (t) => {
        t.dropIndex(["owner_id", "created_at"]);
        t.dropColumn("grant_parts");
        t.dropColumn("bucket_used");
      });
      await db.schema.withSchema(SCHEMA).dropTableIfExists("promotion_grants");
      await db.schema.withSchema(SCHEMA).dropTableIfExists("promotions");
      await db.schema.withSchema(SCHEMA).alterTable("accounts", (t) => {
        t.dropColumn("anchor_day");
        t.dropColumn("monthly_limit");
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
  {
    name: "20261202T1100_keys_orgs_handoffs",
    // Named and read-only keys with a last use; member roles; agent accounts, their takeover
    // links (codes stored hashed) and the per-source window of agent sign-ups.
    async up(db: Knex) {
      await db.schema.withSchema(SCHEMA).alterTable("api_keys", (t) => {
        t.text("name").nullable();
        t.boolean("read_only").notNullable().defaultTo(false);
        t.timestamp("last_used_at", { useTz: true }).nullable();
        t.index(["user_id"]);
        t.index(["organization_id"]);
      });
      // Memberships made before roles existed stay plain members; an operator promotes one with
      // `admin orgs add-member --role owner`.
      await db.schema.withSchema(SCHEMA).alterTable("memberships", (t) => {
        t.text("role").notNullable().defaultTo("member");
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.index(["organization_id"]);
      });
      await db.raw(
        `ALTER TABLE ${SCHEMA}.memberships ADD CONSTRAINT memberships_role_check CHECK (role IN ('owner', 'admin', 'member'))`,
      );
      await db.schema.withSchema(SCHEMA).alterTable("accounts", (t) => {
        t.boolean("is_agent").notNullable().defaultTo(false);
      });
      await db.schema.withSchema(SCHEMA).createTable("handoffs", (t) => {
        t.uuid("id").primary();
        t.uuid("account_id").notNullable().references("id").inTable(`${SCHEMA}.accounts`);
        t.text("email").notNullable();
        t.text("code_hash").notNullable();
        t.integer("failed_attempts").notNullable().defaultTo(0);
        t.timestamp("expires_at", { useTz: true }).notNullable();
        t.timestamp("disabled_at", { useTz: true }).nullable();
        t.timestamp("claimed_at", { useTz: true }).nullable();
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.index(["account_id"]);
      });
      await db.schema.withSchema(SCHEMA).createTable("signup_windows", (t) => {
        t.text("source").notNullable();
        t.timestamp("window_start", { useTz: true }).notNullable();
        t.integer("count").notNullable().defaultTo(0);
        t.primary(["source", "window_start"]);
      });
    },
    async down(db: Knex) {
      await db.schema.withSchema(SCHEMA).dropTableIfExists("signup_windows");
      await db.schema.withSchema(SCHEMA).dropTableIfExists("handoffs");
      await db.schema.withSchema(SCHEMA).alterTable("accounts", (t) => {
        t.dropColumn("is_agent");
      });
      await db.raw(`ALTER TABLE ${SCHEMA}.memberships DROP CONSTRAINT memberships_role_check`);
      await db.schema.withSchema(SCHEMA).alterTable("memberships", (t) => {
        t.dropIndex(["organization_id"]);
        t.dropColumn("role");
        t.dropColumn("created_at");
      });
      await db.schema.withSchema(SCHEMA).alterTable("api_keys", (t) => {
        t.dropIndex(["user_id"]);
        t.dropIndex(["organization_id"]);
        t.dropColumn("name");
        t.dropColumn("read_only");
        t.dropColumn("last_used_at");
      });
    },
  },
  {
    name: "20261206T0900_hold_expiry",
    // Issue #10: a hold may expire (a sync chat turn whose agent died mid-turn); the sweep finds
    // the expired ones still reserved through the partial index.
    async up(db: Knex) {
      await db.schema.withSchema(SCHEMA).alterTable("charges", (t) => {
        t.timestamp("expires_at", { useTz: true }).nullable();
      });
      await db.raw(
        `create index charges_expiring on ${SCHEMA}.charges (expires_at) where state = 'reserved' and expires_at is not null`,
      );
    },
    async down(db: Knex) {
      await db.raw(`drop index if exists ${SCHEMA}.charges_expiring`);
      await db.schema.withSchema(SCHEMA).alterTable("charges", (t) => {
        t.dropColumn("expires_at");
      });
    },
  },
  {
    name: "20261210T0900_verified_email_invitations",
    // Issue #30: an email identifies a user only once verified (a code mailed to it); members
    // join by invitations they accept; keys minted while an account was an agent's are marked,
    // so a takeover can revoke them; organizations remember who created them (the cap per user
    // and "once per person" promotions); a promotion grant names the person it counts against.
    async up(db: Knex) {
      await db.schema.withSchema(SCHEMA).alterTable("accounts", (t) => {
        t.timestamp("email_verified_at", { useTz: true }).nullable();
        t.uuid("created_by").nullable().references("id").inTable(`${SCHEMA}.accounts`);
        t.index(["created_by"]);
      });
      // An address a takeover was claimed with was proven by that claim; every other email on
      // file was set without proof and must be verified again.
      await db.raw(
        `update ${SCHEMA}.accounts a set email_verified_at = h.claimed_at
           from ${SCHEMA}.handoffs h
          where h.account_id = a.id and h.claimed_at is not null and lower(h.email) = lower(a.email)`,
      );
      await db.schema.withSchema(SCHEMA).createTable("email_verifications", (t) => {
        t.uuid("id").primary();
        t.uuid("account_id").notNullable().references("id").inTable(`${SCHEMA}.accounts`);
        t.text("email").notNullable();
        t.text("code_hash").notNullable();
        t.integer("failed_attempts").notNullable().defaultTo(0);
        t.timestamp("expires_at", { useTz: true }).notNullable();
        t.timestamp("disabled_at", { useTz: true }).nullable();
        t.timestamp("used_at", { useTz: true }).nullable();
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.index(["account_id", "created_at"]);
      });
      await db.schema.withSchema(SCHEMA).alterTable("api_keys", (t) => {
        t.boolean("agent").notNullable().defaultTo(false);
      });
      // Keys of accounts still an agent's, and keys an adopted account had before its claim.
      await db.raw(
        `update ${SCHEMA}.api_keys k set agent = true
           from ${SCHEMA}.accounts a
          where a.id = k.user_id and a.is_agent`,
      );
      await db.raw(
        `update ${SCHEMA}.api_keys k set agent = true
           from ${SCHEMA}.handoffs h
          where h.account_id = k.user_id and h.claimed_at is not null and k.created_at < h.claimed_at
            and k.name is distinct from 'takeover'`,
      );
      await db.schema.withSchema(SCHEMA).alterTable("memberships", (t) => {
        // Whether the member's verified email shows in the member list; their choice.
        t.boolean("share_email").notNullable().defaultTo(false);
      });
      await db.schema.withSchema(SCHEMA).createTable("invitations", (t) => {
        t.uuid("id").primary();
        t.uuid("organization_id").notNullable().references("id").inTable(`${SCHEMA}.accounts`);
        // Exactly one of email (matched against a verified email at acceptance) and user_id.
        t.text("email").nullable();
        t.uuid("user_id").nullable();
        t.text("role").notNullable();
        t.uuid("invited_by").notNullable().references("id").inTable(`${SCHEMA}.accounts`);
        t.text("status").notNullable().defaultTo("pending");
        t.uuid("accepted_by").nullable();
        t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.timestamp("expires_at", { useTz: true }).notNullable();
        t.timestamp("decided_at", { useTz: true }).nullable();
        t.index(["organization_id", "status"]);
        t.index(["user_id"]);
      });
      await db.raw(
        `alter table ${SCHEMA}.invitations add constraint invitations_role_check check (role in ('owner', 'admin', 'member')),
           add constraint invitations_status_check check (status in ('pending', 'accepted', 'declined', 'revoked')),
           add constraint invitations_invitee_check check ((email is null) <> (user_id is null))`,
      );
      // One pending invitation per organization and invitee: inviting again refreshes it.
      await db.raw(
        `create unique index invitations_pending_email on ${SCHEMA}.invitations (organization_id, lower(email))
           where status = 'pending' and email is not null`,
      );
      await db.raw(
        `create unique index invitations_pending_user on ${SCHEMA}.invitations (organization_id, user_id)
           where status = 'pending' and user_id is not null`,
      );
      await db.raw(`create index invitations_email on ${SCHEMA}.invitations (lower(email)) where status = 'pending'`);
      await db.schema.withSchema(SCHEMA).alterTable("promotion_grants", (t) => {
        // The person a redemption counts against: the user, or the organization's creator.
        t.uuid("beneficiary_id").nullable();
      });
      await db.raw(`update ${SCHEMA}.promotion_grants set beneficiary_id = owner_id`);
      await db.raw(
        `alter table ${SCHEMA}.promotion_grants alter column beneficiary_id set not null,
           add constraint promotion_grants_once_per_person unique (promotion_id, beneficiary_id)`,
      );
    },
    async down(db: Knex) {
      await db.raw(
        `alter table ${SCHEMA}.promotion_grants drop constraint promotion_grants_once_per_person, drop column beneficiary_id`,
      );
      await db.schema.withSchema(SCHEMA).dropTableIfExists("invitations");
      await db.schema.withSchema(SCHEMA).alterTable("memberships", (t) => {
        t.dropColumn("share_email");
      });
      await db.schema.withSchema(SCHEMA).alterTable("api_keys", (t) => {
        t.dropColumn("agent");
      });
      await db.schema.withSchema(SCHEMA).dropTableIfExists("email_verifications");
      await db.schema.withSchema(SCHEMA).alterTable("accounts", (t) => {
        t.dropIndex(["created_by"]);
        t.dropColumn("created_by");
        t.dropColumn("email_verified_at");
      });
    },
  },
];
