// Chat throughput and observability cost for `pnpm bench o p`.
// (p) sync chat turns per second on a small stored document (offline engine, 8 clients, each
//     with its own key, session and document, for a fixed time) on the deployed shape, against
//     the same number of plain Postgres transactions writing the same rows, 8 at a time. The
//     rows each side wrote are read from pg_stat_user_tables and printed side by side.
// (o) tracing alone, and metrics + tracing (OTLP to a local sink), on vs both off on the chat path,
//     paired rounds against a second "off" stack as the noise floor, as (l) does (target: < 3 %
//     of p50).
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { billingV1 } from "@redline/grpc-stubs";
import type { LocalInfra } from "@redline/local-infra";
import { createDb, createRpcClient, type Knex, withSpan } from "@redline/service-kit";
import { startOtlpReceiver } from "../../test/support/otlp-receiver.js";
import type { TestStack } from "../../test/support/stack.js";
import type { BenchResult } from "./bench-ingest.js";
import { caller, type ProcessStack, startProcessStack } from "./bench-stack.js";
import { readStackFile } from "./stack.js";
import { quantile, seededRandom, shuffled } from "./stats.js";

/** The small stored document every client edits, and the two words its turns swap. */
const SMALL_DOCUMENT = "<h1>Terms</h1><p>The alpha release ships soon.</p><p>Second paragraph.</p>";
const WORDS = ["alpha", "omega"] as const;

/** The offline engine, whatever the caller's environment says. */
const OFFLINE = { OPENAI_BASE_URL: "", OPENAI_API_KEY: "" };

/** One chat client: its key, the owner behind it, its session and the document loaded there. */
interface ChatClient {
  key: string;
  ownerId: string;
  sessionId: string;
  documentId: string;
  /** Turns done, so the next one swaps the word the document now holds. */
  turns: number;
}

/** A sync chat turn on `client`'s stored document that changes one chunk; ms taken. */
async function chatTurn(call: TestStack["call"], client: ChatClient): Promise<number> {
  const [from, to] = client.turns % 2 === 0 ? WORDS : ([WORDS[1], WORDS[0]] as const);
  const started = performance.now();
  const res = await call("POST", "/v1/chat", {
    key: client.key,
    body: { session_id: client.sessionId, message: `replace "${from}" with "${to}"` },
  });
  const body = (await res.json()) as { document_changes?: { changes?: unknown[] } };
  if (res.status !== 200) throw new Error(`chat answered ${res.status}: ${JSON.stringify(body)}`);
  if (body.document_changes?.changes?.length !== 1) throw new Error("a bench turn changed no chunk");
  client.turns++;
  return performance.now() - started;
}

/** `count` clients, each with a pro key of its own (a user of its own) and the small document loaded in a session. */
async function chatClients(stack: ProcessStack, count: number, name: string): Promise<ChatClient[]> {
  const billing = createRpcClient(billingV1.BillingServiceService, stack.stack.addrs.billing);
  try {
    return await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const { apiKey: key } = await billing.createApiKey({ user: `${name}-${i}`, organization: "", plan: "pro" });
        const ownerId = (await billing.resolveApiKey({ apiKey: key })).principal?.ownerId ?? "";
        const res = await stack.call("POST", "/v1/chat", {
          key,
          body: { message: `replace "${WORDS[0]}" with "${WORDS[1]}"`, document_html: SMALL_DOCUMENT },
        });
        const body = (await res.json()) as { session_id: string; document_changes: { document_id: string } };
        if (res.status !== 200) throw new Error(`loading the bench document answered ${res.status}`);
        return { key, ownerId, sessionId: body.session_id, documentId: body.document_changes.document_id, turns: 1 };
      }),
    );
  } finally {
    billing.close();
  }
}

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

/** Runs `worker` in `concurrency` loops until `stop()` says so; returns every call's ms. */
async function inLoops(concurrency: number, stop: () => boolean, worker: (i: number) => Promise<number>) {
  const times: number[] = [];
  await Promise.all(
    Array.from({ length: concurrency }, async (_, i) => {
      while (!stop()) times.push(await worker(i));
    }),
  );
  return times;
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
  const CLIENTS = 8;
  const stack = await startProcessStack(infra, "bench_turns", OFFLINE);
  const db = createDb(stack.stack.databaseUrl, "public", CLIENTS + 2);
  try {
    const clients = await chatClients(stack, CLIENTS, "bench-turns");
    // Warm-up: connections, JIT, the auth cache of every key.
    for (let r = 0; r < 5; r++) await Promise.all(clients.map((c) => chatTurn(stack.call, c)));
    await new Promise((resolve) => setTimeout(resolve, STATS_FLUSH_MS));
    const beforeChat = await tableWrites(db);
    const chatStarted = performance.now();
    const until = Date.now() + seconds * 1000;
    const chatTimes = await inLoops(
      CLIENTS,
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
      CLIENTS,
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
        `(p) sync chat on a small stored document, offline engine, ${CLIENTS} clients for ${seconds} s (separate processes): ${turns} turns, ${chatRate.toFixed(1)} turns/s, p50 ${quantile(chatTimes, 0.5).toFixed(1)} ms, p99 ${quantile(chatTimes, 0.99).toFixed(1)} ms` +
        `\n      plain Postgres, the same ${plainTimes.length} transactions of the same rows, ${CLIENTS} at a time: ${plainRate.toFixed(1)} tx/s, p50 ${quantile(plainTimes, 0.5).toFixed(1)} ms, p99 ${quantile(plainTimes, 0.99).toFixed(1)} ms` +
        `\n      rows per turn | per transaction (+inserted ~updated): ${rows}; load average ${loadavg()[0].toFixed(1)}`,
      value: `chat ${chatRate.toFixed(1)} turns/s vs plain Postgres ${plainRate.toFixed(1)} tx/s: ratio ${(chatRate / plainRate).toFixed(2)}`,
    });
  } finally {
    await db.destroy();
    await stack.stop();
  }
}

/**
 * (o): the cost of tracing, and of metrics and tracing together, on the chat path. Four process
 * stacks: "on" (metrics on, every span exported over OTLP/HTTP to a local sink), "tracing"
 * (the same export, METRICS_ADDR=off), and "off" and "off2" (METRICS_ADDR=off, no OTEL_*).
 * Each round runs one turn on each in a fresh random order, with a pause between turns: a fixed
 * rotation put each stack always after the same neighbour, whose background work (span export,
 * outbox relay, batched rate-limit debit) then landed on its turns, a bias larger than the 3 %
 * measured. A long warm-up first, so the figure is the services' steady state, not their JIT's
 * first minutes. The verdict is the median
 * of per-round differences on − off as a share of p50(off), robust to the shared machine's
 * drift (p50s alone drift by more than the 3 % measured), when off2 − off the same way (the
 * noise floor) is under 1.5 %; else the services' CPU per turn on vs off, when its own noise
 * floor is; else none (a MISS, printed as inconclusive).
 */
export async function benchObservabilityOverhead(
  results: BenchResult[],
  infra: LocalInfra,
  rounds = 200,
): Promise<void> {
  const warmup = 200;
  // Long enough for a turn's background work (relay publish, 50 ms debit batch, span export) to
  // finish before the next stack's turn starts.
  const pauseMs = 60;
  const random = seededRandom(0x0b5e);
  const sink = await startOtlpReceiver();
  const noOtel = { OTEL_EXPORTER_OTLP_ENDPOINT: "", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "" };
  const names = ["on", "tracing", "off", "off2"] as const;
  const envs = {
    on: { ...OFFLINE, ...noOtel, METRICS_ADDR: "", OTEL_EXPORTER_OTLP_ENDPOINT: sink.url },
    tracing: { ...OFFLINE, ...noOtel, METRICS_ADDR: "off", OTEL_EXPORTER_OTLP_ENDPOINT: sink.url },
    off: { ...OFFLINE, ...noOtel, METRICS_ADDR: "off" },
    off2: { ...OFFLINE, ...noOtel, METRICS_ADDR: "off" },
  };
  const stacks: ProcessStack[] = [];
  // Each service process ties itself to this one with an exit listener: 24 of them here.
  process.setMaxListeners(Math.max(process.getMaxListeners(), 4 * 6 + 10));
  try {
    for (const name of names) stacks.push(await startProcessStack(infra, `bench_obs_${name}`, envs[name]));
    if (!stacks[0].stack.metrics.gateway || stacks[1].stack.metrics.gateway)
      throw new Error("METRICS_ADDR=off was not applied");
    const sides = await Promise.all(
      names.map(async (name, i) => ({
        name,
        call: caller(stacks[i].url),
        client: (await chatClients(stacks[i], 1, `bench-obs-${name}`))[0],
        times: [] as number[],
      })),
    );
    const paired = { on: [] as number[], tracing: [] as number[], floor: [] as number[] };
    const cpuBefore: number[] = [];
    let measuredFrom = 0;
    // Idle first: what each stack's services burn per second with no request (timers, polls,
    // probes), subtracted from the measured window, whose length the machine's load stretches.
    const idleMs = 15_000;
    const idleBefore = stacks.map((s) => serviceCpuMs(s.stack.dataDir));
    await new Promise((resolve) => setTimeout(resolve, idleMs));
    const idlePerSecond = stacks.map((s, i) => ((serviceCpuMs(s.stack.dataDir) - idleBefore[i]) * 1000) / idleMs);
    for (let r = 0; r < rounds + warmup; r++) {
      if (r === warmup) {
        for (const [i, s] of stacks.entries()) cpuBefore[i] = serviceCpuMs(s.stack.dataDir);
        measuredFrom = performance.now();
      }
      const round: Record<string, number> = {};
      for (const side of shuffled(sides, random)) {
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
        round[side.name] = await chatTurn(side.call, side.client);
      }
      if (r < warmup) continue;
      for (const side of sides) side.times.push(round[side.name]);
      paired.on.push(round.on - round.off);
      paired.tracing.push(round.tracing - round.off);
      paired.floor.push(round.off2 - round.off);
    }
    const windowS = (performance.now() - measuredFrom) / 1000;
    const cpu = Object.fromEntries(
      stacks.map((s, i) => [
        names[i],
        (serviceCpuMs(s.stack.dataDir) - cpuBefore[i] - idlePerSecond[i] * windowS) / rounds,
      ]),
    ) as Record<(typeof names)[number], number>;
    const idle = Object.fromEntries(names.map((n, i) => [n, idlePerSecond[i]])) as typeof cpu;
    const p50 = Object.fromEntries(sides.map((s) => [s.name, quantile(s.times, 0.5)])) as Record<
      (typeof names)[number],
      number
    >;
    const share = (diffs: number[]) => (quantile(diffs, 0.5) / p50.off) * 100;
    const sign = (x: number) => `${x >= 0 ? "+" : ""}${x.toFixed(1)} %`;
    const added = share(paired.on);
    const floor = share(paired.floor);
    const cpuShare = (name: (typeof names)[number]) => ((cpu[name] - cpu.off) / cpu.off) * 100;
    // The paired latency judges when its own noise floor is well under the target; on a machine
    // too loaded for that, the services' CPU per turn (less their idle burn) does: load stretches
    // every side's wall time, not the CPU a turn needs. Added CPU counts work off the request
    // path too (span export): an upper bound of what the turn's latency gains on a quiet machine.
    const byLatency = Math.abs(floor) < 1.5;
    const verdict = byLatency ? added : cpuShare("on");
    // Neither measure steady enough to tell 3 % apart: no verdict rather than a lucky one.
    const judged = byLatency || Math.abs(cpuShare("off2")) < 1.5;
    const perTurn = Math.round(sink.spans.length / (2 * (rounds + warmup) + 2));
    const hookNs = await offHookCostNs();
    results.push({
      name:
        `(o) tracing and metrics on the sync chat path, ${rounds} paired rounds (separate processes): p50 on ${p50.on.toFixed(2)} ms, tracing only ${p50.tracing.toFixed(2)} ms, off ${p50.off.toFixed(2)} ms, off2 ${p50.off2.toFixed(2)} ms; ~${perTurn} spans per turn exported` +
        `\n      median per-round difference to off: on ${quantile(paired.on, 0.5).toFixed(2)} ms (${sign(added)}), tracing only ${quantile(paired.tracing, 0.5).toFixed(2)} ms (${sign(share(paired.tracing))}), off2 ${quantile(paired.floor, 0.5).toFixed(2)} ms (${sign(floor)}, noise floor); load average ${loadavg()[0].toFixed(1)}` +
        `\n      CPU of the six services idle: on ${idle.on.toFixed(1)} ms/s, tracing only ${idle.tracing.toFixed(1)} ms/s, off ${idle.off.toFixed(1)} ms/s, off2 ${idle.off2.toFixed(1)} ms/s` +
        `\n      CPU of the six services per turn, less idle: on ${cpu.on.toFixed(2)} ms (${sign(cpuShare("on"))}), tracing only ${cpu.tracing.toFixed(2)} ms (${sign(cpuShare("tracing"))}), off ${cpu.off.toFixed(2)} ms, off2 ${cpu.off2.toFixed(2)} ms (${sign(cpuShare("off2"))}, noise floor)` +
        `\n      off, one tracing hook (withSpan) costs ${hookNs.toFixed(0)} ns over a direct call; verdict from ${byLatency ? "the paired latency" : judged ? "CPU per turn (the latency noise floor is 1.5 % or more)" : "neither: both noise floors are 1.5 % or more"}`,
      value: judged
        ? `metrics + tracing add ${sign(verdict)} (${byLatency ? "of p50" : "of CPU per turn"})`
        : `inconclusive on this machine now (noise floor ${sign(floor)} of p50, ${sign(cpuShare("off2"))} of CPU per turn)`,
      target: "< 3 % of p50",
      pass: judged && verdict < 3,
    });
  } finally {
    await Promise.all(stacks.map((s) => s.stop()));
    await sink.close();
  }
}

/** Ticks of /proc/<pid>/stat times per second (USER_HZ, 100 on Linux). */
const USER_HZ = 100;

/** User + system CPU ms used so far by the service processes in `dataDir`'s stack.json. */
function serviceCpuMs(dataDir: string): number {
  let ticks = 0;
  for (const child of Object.values(readStackFile(dataDir)?.children ?? {})) {
    if (!child) continue;
    try {
      const stat = readFileSync(`/proc/${child.pid}/stat`, "utf8");
      // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone: counted as nothing
    }
  }
  return (ticks * 1000) / USER_HZ;
}

/**
 * What a tracing hook costs when tracing is off (this process never calls initTracing): an
 * awaited withSpan around a resolved promise vs the same await without it, in ns per call.
 */
async function offHookCostNs(): Promise<number> {
  const calls = 200_000;
  const work = async () => 1;
  const time = async (fn: () => Promise<number>) => {
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) await fn();
    return Number(process.hrtime.bigint() - started) / calls;
  };
  const traced = () => withSpan("bench", {}, work);
  await time(work);
  await time(traced);
  const samples = Array.from({ length: 5 }, () => 0);
  for (let i = 0; i < samples.length; i++) samples[i] = (await time(traced)) - (await time(work));
  return quantile(samples, 0.5);
}
