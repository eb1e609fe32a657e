// Sessions schema migration that scopes caller-chosen session ids per owner (listed in migrations.ts).
import type { Knex, Migration } from "@redline/service-kit";

const SCHEMA = "sessions";
/** Tables that hang off a session by `session_id`, with the key columns of their session index. */
const CHILDREN = ["roster", "messages", "editor_actions", "reverts"] as const;

export const ownerScopeMigrations: Migration[] = [
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
];
