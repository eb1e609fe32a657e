// Every service's migrations go up, down and up again on a real database (STYLE practice 9).
// The `migrate` command of a service process applies them once and is idempotent, concurrent runs
// wait for each other, a service refuses to start on a schema missing a migration, and the local
// supervisor migrates every schema before starting the services.
import { spawn } from "node:child_process";
import * as agent from "@redline/agent";
import * as billing from "@redline/billing";
import * as documents from "@redline/documents";
import * as ingest from "@redline/ingest";
import { createTestDatabase } from "@redline/local-infra";
import { migrateServices, RUNTIME_ARGS } from "@redline/local-stack";
import { createDb, migrateDown, migrateLatest, pendingMigrations, verifySchema } from "@redline/service-kit";
import * as sessions from "@redline/sessions";
import pg from "pg";
import { describe, expect, inject, it } from "vitest";
import { REPO_ROOT } from "./support/fixtures.js";

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

/** One pino line of a service process. */
interface LogLine {
  level: number;
  msg: string;
  schema?: string;
  applied?: string[];
  missing?: string[];
}

/** Runs services/<service>/src/main.ts with `args` until it exits: its exit code and log lines. */
function runMain(
  service: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; lines: LogLine[]; ms: number }> {
  const started = Date.now();
  const child = spawn(process.execPath, [...RUNTIME_ARGS.tsx, `services/${service}/src/main.ts`, ...args], {
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "info", ...env },
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    err += d.toString();
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => {
      const lines = out
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as LogLine);
      if (lines.length === 0 && err) reject(new Error(`${service} ${args.join(" ")} printed no log line: ${err}`));
      else resolve({ code, lines, ms: Date.now() - started });
    });
  });
}

const FATAL = 60;

async function appliedNames(url: string, schema: string): Promise<string[]> {
  const db = createDb(url, schema);
  try {
    return await db.withSchema(schema).table("knex_migrations").orderBy("id").pluck("name");
  } finally {
    await db.destroy();
  }
}

describe("the migrate command (main.ts migrate)", () => {
  it("applies every pending migration once, then finds the schema up to date", async () => {
    const url = await createTestDatabase(inject("infra").databaseUrl, "migrate_cmd");
    const names = sessions.migrations.map((m) => m.name);
    const first = await runMain("sessions", ["migrate"], { DATABASE_URL: url, NATS_URL: inject("infra").natsUrl });
    expect(first.code).toBe(0);
    expect(first.lines.find((l) => l.applied)?.applied).toEqual(names);
    const second = await runMain("sessions", ["migrate"], { DATABASE_URL: url, NATS_URL: inject("infra").natsUrl });
    expect(second.code).toBe(0);
    expect(second.lines.some((l) => l.applied)).toBe(false);
    expect(second.lines.map((l) => l.msg)).toContain(`schema "sessions" is up to date (${names.length} migrations)`);
    expect(await appliedNames(url, sessions.SCHEMA)).toEqual(names);
  });

  it("lets two concurrent runs on one schema both succeed, applying each migration once", async () => {
    const url = await createTestDatabase(inject("infra").databaseUrl, "migrate_race");
    const names = documents.migrations.map((m) => m.name);
    // Hold the schema's migration lock so both runs are surely in flight together, then let go.
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query("select pg_advisory_lock(hashtext('redline.migrate.documents'))");
      const env = { DATABASE_URL: url, NATS_URL: "nats://127.0.0.1:1" };
      const racing = Promise.all([1, 2].map(() => runMain("documents", ["migrate"], env)));
      for (let waiting = 0; waiting < 2; await new Promise((r) => setTimeout(r, 100))) {
        const { rows } = await holder.query<{ n: string }>(
          "select count(*) as n from pg_locks where locktype = 'advisory' and not granted",
        );
        waiting = Number(rows[0].n);
      }
      await holder.query("select pg_advisory_unlock_all()");
      const runs = await racing;
      expect(runs.map((r) => r.code)).toEqual([0, 0]);
      // One run applied everything while the other waited on the lock, then found nothing to do.
      const applied = runs.map((r) => r.lines.find((l) => l.applied)?.applied ?? []);
      expect(applied.flat().sort()).toEqual([...names].sort());
      expect(applied.filter((a) => a.length > 0)).toHaveLength(1);
      expect(await appliedNames(url, documents.SCHEMA)).toEqual(names);
    } finally {
      await holder.end();
    }
  });

  it("serializes in-process runners too: four at once on an empty database", async () => {
    const url = await createTestDatabase(inject("infra").databaseUrl, "migrate_race4");
    const dbs = [1, 2, 3, 4].map(() => createDb(url, agent.SCHEMA));
    try {
      const applied = await Promise.all(dbs.map((db) => migrateLatest(db, agent.SCHEMA, agent.migrations)));
      expect(applied.flat()).toEqual(agent.migrations.map((m) => m.name));
      expect(await pendingMigrations(dbs[0], agent.SCHEMA, agent.migrations)).toEqual([]);
    } finally {
      await Promise.all(dbs.map((db) => db.destroy()));
    }
  });

  it("exits non-zero with a clear line when the database cannot be reached", async () => {
    const run = await runMain("billing", ["migrate"], { DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" });
    expect(run.code).toBe(1);
    const fatal = run.lines.filter((l) => l.level === FATAL);
    expect(fatal).toHaveLength(1);
    expect(fatal[0].msg).toMatch(/^schema "billing": migration failed: /);
  });

  it("refuses an unknown argument with a usage line", async () => {
    const run = await runMain("billing", ["migrat"], { DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" });
    expect(run.code).toBe(2);
    expect(run.lines.find((l) => l.level === FATAL)?.msg).toMatch(
      /unknown arguments "migrat"; usage: main.js \[migrate\]/,
    );
  });
});

describe("the schema check at start", () => {
  it("refuses to start a service whose schema lacks a migration, naming schema and migration", async () => {
    const url = await createTestDatabase(inject("infra").databaseUrl, "migrate_missing");
    const db = createDb(url, sessions.SCHEMA);
    const last = sessions.migrations[sessions.migrations.length - 1].name;
    try {
      await migrateLatest(db, sessions.SCHEMA, sessions.migrations.slice(0, -1));
    } finally {
      await db.destroy();
    }
    const run = await runMain("sessions", [], {
      DATABASE_URL: url,
      NATS_URL: inject("infra").natsUrl,
      SESSIONS_ADDR: "127.0.0.1:0",
    });
    expect(run.code).toBe(1);
    const fatal = run.lines.filter((l) => l.level === FATAL);
    expect(fatal).toHaveLength(1);
    expect(fatal[0]).toMatchObject({ schema: "sessions", missing: [last] });
    expect(fatal[0].msg).toBe(
      `schema "sessions" is missing 1 migration (${last}): run this service with the argument "migrate" first (node dist/main.js migrate; pnpm start does it)`,
    );
    // It never served, and it left the schema as it was.
    expect(run.lines.some((l) => /listening/.test(l.msg))).toBe(false);
    expect(await appliedNames(url, sessions.SCHEMA)).toEqual(sessions.migrations.slice(0, -1).map((m) => m.name));
  });

  it("names every migration of a schema never migrated", async () => {
    const url = await createTestDatabase(inject("infra").databaseUrl, "migrate_empty");
    const db = createDb(url, ingest.SCHEMA);
    try {
      await expect(verifySchema(db, ingest.SCHEMA, ingest.migrations)).rejects.toMatchObject({
        name: "SchemaOutOfDateError",
        schema: "ingest",
        missing: ingest.migrations.map((m) => m.name),
      });
      // The check only reads: no schema or table was created.
      expect(await db("information_schema.schemata").where({ schema_name: ingest.SCHEMA }).first()).toBeUndefined();
    } finally {
      await db.destroy();
    }
  });
});

describe("the local supervisor's migration step", () => {
  it("migrates every service's schema once before the services start; a second run applies nothing", async () => {
    const url = await createTestDatabase(inject("infra").databaseUrl, "migrate_stack");
    const lines: string[] = [];
    await migrateServices(url, (l) => lines.push(l));
    for (const service of [agent, billing, documents, ingest, sessions]) {
      const db = createDb(url, service.SCHEMA);
      try {
        await verifySchema(db, service.SCHEMA, service.migrations);
      } finally {
        await db.destroy();
      }
    }
    expect(lines[0]).toMatch(/^\[supervisor\] migrations done in \d+ ms \(applied: documents \+\d+, sessions \+\d+/);
    await migrateServices(url, (l) => lines.push(l));
    expect(lines[1]).toMatch(/\(every schema up to date\)$/);
  });
});
