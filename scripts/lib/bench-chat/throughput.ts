// (p) chat throughput for `pnpm bench p`: sync chat turns per second on a small stored document
// (offline engine, 8 clients, each with its own key, session and document, for a fixed time) on
// the deployed shape, against the same number of plain Postgres transactions writing the same
// rows, 8 at a time. The rows each side wrote are read from pg_stat_user_tables and printed side
// by side.
import { randomUUID } from "node:crypto";
import { loadavg } from "node:os";
import type { LocalInfra } from "@redline/local-infra";
import { quantile, startProcessStack } from "@redline/local-stack";
import { createDb, type Knex } from "@redline/service-kit";
import type { BenchResult } from "../bench-ingest.js";
import { type ChatClient, chatClients, chatTurn, inLoops, LOAD_CLIENTS, OFFLINE } from "./shared.js";

/** Rows inserted and updated per table (schema.table), from the server's statistics. */
type RowCounts = Record<string, { ins: number; upd: number }>;

/**
 * The cumulative inserts and updates of every user table. Other backends flush their counts when
 * idle, at most every 10 s (PGSTAT_IDLE_INTERVAL), so the caller waits that long after writing.
 */
async function tableWrites(db: Knex): Promise<RowCounts> {
  await db.raw("select pg_stat_clear_snapshot()");
  const { rows } = await db.raw<{ rows: { t: string; ins: string; upd: string }[] }>(
    "select schemaname || '.' || relname as t, n_tup_ins as ins, n_tup_upd as upd from pg_stat_user_tables",
  );
  return Object.fromEntries(rows.map((r) => [r.t, { ins: Number(r.ins), upd: Number(r.upd) }]));
}

const STATS_FLUSH_MS = 11_000;

/** Rows per unit between two snapshots, as "table +ins ~upd" sorted by table. */
function perUnit(before: RowCounts, after: RowCounts, units: number): Map<string, string> {
  const out = new Map<string, string>();
  for (const table of Object.keys(after).sort()) {
    const ins = (after[table].ins - (before[table]?.ins ?? 0)) / units;
    const upd = (after[table].upd - (before[table]?.upd ?? 0)) / units;
    if (ins < 0.05 && upd < 0.05) continue;
    out.set(table, `${ins >= 0.05 ? `+${ins.toFixed(1)}` : ""}${upd >= 0.05 ? `~${upd.toFixed(1)}` : ""}`);
  }
  return out;
}

/**
 * One sync chat turn's rows written as plain SQL in one transaction, for `client`: billing
 * (usage bumped and a charge reserved, then both settled; the key's token bucket), documents (the
 * edited chunk's revision closed and a new one opened, a version, the head, an outbox event and
 * its publication mark) and sessions (turn index, both messages, the roster's last-seen version,
 * the memory note): the same tables and row counts as the service's turn, in one transaction
 * where the service takes several (reserve, commit, settle, record), without its reads and checks.
 */
async function plainTurn(db: Knex, client: ChatClient, period: string, i: number): Promise<void> {
  const owner = client.ownerId;
  await db.transaction(async (trx) => {
    await trx("billing.usage_periods")
      .where({ owner_id: owner, period_start: period })
      .update({ ops_used: trx.raw("ops_used + 1") });
    const chargeKey = `plain-${randomUUID()}`;
    await trx("billing.charges").insert({
      owner_id: owner,
      charge_key: chargeKey,
      period_start: period,
      ops: 1,
      state: "reserved",
      bucket_used: "monthly",
    });
    await trx("billing.charges").where({ owner_id: owner, charge_key: chargeKey }).update({ state: "settled" });
    await trx("billing.usage_periods")
      .where({ owner_id: owner, period_start: period })
      .update({ ops_used: trx.raw("ops_used + 0") });
    await trx.raw(
      `insert into billing.rate_limit_buckets as b (subject, limiter, tokens, allowed, updated_at)
       values (?, 'plain', 100, true, clock_timestamp())
       on conflict (subject, limiter) do update set tokens = b.tokens, updated_at = excluded.updated_at`,
      [`plain-${owner}`],
    );

    const versionId = randomUUID();
    const [turn] = await trx("sessions.sessions")
      .where({ id: client.sessionId, owner_id: owner })
      .update({ next_turn_index: trx.raw("next_turn_index + 1"), updated_at: trx.fn.now() })
      .returning(trx.raw("next_turn_index - 1 as turn_index"));
    await trx("sessions.messages").insert(
      (["user", "ai"] as const).map((sender) => ({
        id: randomUUID(),
        owner_id: owner,
        session_id: client.sessionId,
        turn_index: turn.turn_index,
        sender,
        content: `plain turn ${i}`,
        checkpoint_id: versionId,
      })),
    );
    await trx("sessions.roster")
      .where({ owner_id: owner, session_id: client.sessionId, document_id: client.documentId })
      .whereNull("closed_at")
      .update({ last_seen_version_id: versionId });
    await trx("sessions.memory_notes")
      .where({ owner_id: owner })
      .update({ note: `plain turn ${i}`, updated_at: trx.fn.now() });
    // Documents last: the outbox ordering lock is then held only for its own rows, as in a commit.
    const doc = await trx("documents.documents").where({ id: client.documentId }).forUpdate().first();
    await trx.raw("select pg_advisory_xact_lock(hashtext('redline.documents.outbox'))");
    const seq = doc.head_seq + 1;
    const [live] = await trx("documents.chunk_revisions")
      .where({ document_id: client.documentId })
      .whereNull("valid_to")
      .whereLike("html", "%release%")
      .update({ valid_to: seq })
      .returning("*");
    await trx("documents.chunk_revisions").insert({
      ...live,
      html: live.html.replace(/alpha|omega/, (w: string) => (w === "alpha" ? "omega" : "alpha")),
      valid_from: seq,
      valid_to: null,
    });
    await trx("documents.versions").insert({
      id: versionId,
      document_id: client.documentId,
      seq,
      parent_id: doc.head_version_id,
      session_id: client.sessionId,
      kind: "edit",
      summary: "plain",
    });
    await trx("documents.documents")
      .where({ id: client.documentId })
      .update({ head_version_id: versionId, head_seq: seq, updated_at: trx.fn.now() });
    const [event] = await trx("documents.outbox")
      .insert({
        event_type: "document_updated",
        owner_id: owner,
        document_id: client.documentId,
        version_id: versionId,
        session_id: client.sessionId,
        payload: JSON.stringify({ kind: "edit", chunk_ids: [live.chunk_id] }),
      })
      .returning("id");
    await trx("documents.outbox").where({ id: event.id }).update({ published_at: trx.fn.now() });
  });
}

/**
 * (p): sync chat turns/s (8 clients, `seconds` long) vs the same number of plain Postgres
 * transactions of the same rows (8 at a time), on one process stack; ratio and rows per unit.
 */
export async function benchChatThroughput(results: BenchResult[], infra: LocalInfra, seconds = 20): Promise<void> {
  const stack = await startProcessStack(infra, "bench_turns", OFFLINE);
  const db = createDb(stack.stack.databaseUrl, "public", LOAD_CLIENTS + 2);
  try {
    const clients = await chatClients(
      { call: stack.call, billingAddr: stack.stack.addrs.billing },
      LOAD_CLIENTS,
      "bench-turns",
    );
    // Warm-up: connections, JIT, the auth cache of every key.
    for (let r = 0; r < 5; r++) await Promise.all(clients.map((c) => chatTurn(stack.call, c)));
    await new Promise((resolve) => setTimeout(resolve, STATS_FLUSH_MS));
    const beforeChat = await tableWrites(db);
    const chatStarted = performance.now();
    const until = Date.now() + seconds * 1000;
    const chatTimes = await inLoops(
      LOAD_CLIENTS,
      () => Date.now() >= until,
      (i) => chatTurn(stack.call, clients[i]),
    );
    const chatSeconds = (performance.now() - chatStarted) / 1000;
    const turns = chatTimes.length;
    await new Promise((resolve) => setTimeout(resolve, STATS_FLUSH_MS));
    const afterChat = await tableWrites(db);

    const periods = await Promise.all(
      clients.map(
        async (c) =>
          (
            await db("billing.usage_periods")
              .where({ owner_id: c.ownerId })
              .orderBy("period_start", "desc")
              .first()
              .select(db.raw("to_char(period_start, 'YYYY-MM-DD') as p"))
          ).p as string,
      ),
    );
    let started = 0;
    const plainStarted = performance.now();
    const plainTimes = await inLoops(
      LOAD_CLIENTS,
      () => started >= turns,
      async (i) => {
        const n = started++;
        const t = performance.now();
        await plainTurn(db, clients[i], periods[i], n);
        return performance.now() - t;
      },
    );
    const plainSeconds = (performance.now() - plainStarted) / 1000;
    await new Promise((resolve) => setTimeout(resolve, STATS_FLUSH_MS));
    const afterPlain = await tableWrites(db);

    const chatRate = turns / chatSeconds;
    const plainRate = plainTimes.length / plainSeconds;
    const chatRows = perUnit(beforeChat, afterChat, turns);
    const plainRows = perUnit(afterChat, afterPlain, plainTimes.length);
    const tables = [...new Set([...chatRows.keys(), ...plainRows.keys()])].sort();
    const rows = tables.map((t) => `${t} ${chatRows.get(t) ?? "0"} | ${plainRows.get(t) ?? "0"}`).join(", ");
    results.push({
      name:
        `(p) sync chat on a small stored document, offline engine, ${LOAD_CLIENTS} clients for ${seconds} s (separate processes): ${turns} turns, ${chatRate.toFixed(1)} turns/s, p50 ${quantile(chatTimes, 0.5).toFixed(1)} ms, p99 ${quantile(chatTimes, 0.99).toFixed(1)} ms` +
        `\n      plain Postgres, the same ${plainTimes.length} transactions of the same rows, ${LOAD_CLIENTS} at a time: ${plainRate.toFixed(1)} tx/s, p50 ${quantile(plainTimes, 0.5).toFixed(1)} ms, p99 ${quantile(plainTimes, 0.99).toFixed(1)} ms` +
        `\n      rows per turn | per transaction (+inserted ~updated): ${rows}; load average ${loadavg()[0].toFixed(1)}`,
      value: `chat ${chatRate.toFixed(1)} turns/s vs plain Postgres ${plainRate.toFixed(1)} tx/s: ratio ${(chatRate / plainRate).toFixed(2)}`,
    });
  } finally {
    await db.destroy();
    await stack.stop();
  }
}
