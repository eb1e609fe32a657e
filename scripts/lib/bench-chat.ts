// Chat throughput and observability cost for `pnpm bench o p`.
// (p) sync chat turns per second on a small stored document (offline engine, 8 clients, each
//     with its own key, session and document, for a fixed time) on the deployed shape, against
//     the same number of plain Postgres transactions writing the same rows, 8 at a time. The
//     rows each side wrote are read from pg_stat_user_tables and printed side by side.
// (o) tracing alone, and metrics + tracing (OTLP to a local sink), on vs both off on the chat path,
//     switched round by round in the same processes, with an off-vs-off noise floor: on the
//     deployed shape with one client and with 8 at once (judged) and with every service in one
//     process; plus what the collectors burn idle (target: < 3 % of p50).
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { billingV1 } from "@redline/grpc-stubs";
import type { LocalInfra } from "@redline/local-infra";
import {
  createDb,
  createRpcClient,
  initTracing,
  type Knex,
  setMetricsRecording,
  setTracingRecording,
  withSpan,
} from "@redline/service-kit";
import { type StackOptions, startTestStack, type TestStack } from "../../test/support/stack.js";
import type { BenchResult } from "./bench-ingest.js";
import { type ProcessStack, startProcessStack } from "./bench-stack.js";
import { readStackFile } from "./stack.js";
import { quantile, seededRandom, shuffled } from "./stats.js";

/** The small stored document every client edits, and the two words its turns swap. */
const SMALL_DOCUMENT = "<h1>Terms</h1><p>The alpha release ships soon.</p><p>Second paragraph.</p>";
const WORDS = ["alpha", "omega"] as const;

/** Clients at once in (p), and in (o)'s loaded run: the load the issue names for chat throughput. */
const LOAD_CLIENTS = 8;

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

/** A sync chat turn on `client`'s stored document that changes one chunk, sending `headers`; ms taken. */
async function chatTurn(
  call: TestStack["call"],
  client: ChatClient,
  headers?: Record<string, string>,
): Promise<number> {
  const [from, to] = client.turns % 2 === 0 ? WORDS : ([WORDS[1], WORDS[0]] as const);
  const started = performance.now();
  const res = await call("POST", "/v1/chat", {
    key: client.key,
    body: { session_id: client.sessionId, message: `replace "${from}" with "${to}"` },
    headers,
  });
  const body = (await res.json()) as { document_changes?: { changes?: unknown[] } };
  if (res.status !== 200) throw new Error(`chat answered ${res.status}: ${JSON.stringify(body)}`);
  if (body.document_changes?.changes?.length !== 1) throw new Error("a bench turn changed no chunk");
  client.turns++;
  return performance.now() - started;
}

/** `count` clients, each with a pro key of its own (a user of its own) and the small document loaded in a session. */
async function chatClients(
  stack: { call: TestStack["call"]; billingAddr: string },
  count: number,
  name: string,
): Promise<ChatClient[]> {
  const billing = createRpcClient(billingV1.BillingServiceService, stack.billingAddr);
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

/** The gateway's limits with room for a benchmark's pace; the limiter still runs on every request. */
const UNLIMITED: StackOptions["rateLimits"] = {
  expensive: { capacity: 1_000_000, windowSeconds: 60 },
  write: { capacity: 1_000_000, windowSeconds: 60 },
  read: { capacity: 1_000_000, windowSeconds: 60 },
};

/** UNLIMITED as a process stack's gateway reads it. */
const UNLIMITED_ENV = Object.fromEntries(
  ["EXPENSIVE", "WRITE", "READ"].flatMap((c) => [
    [`RATE_LIMIT_${c}_CAPACITY`, "1000000"],
    [`RATE_LIMIT_${c}_WINDOW_S`, "60"],
  ]),
);

/**
 * The settings of (o): [tracing recording, metrics hooks recording, turns sampled out]. A turn
 * sampled out carries a caller's traceparent with flag 00, as a parent-based sampler keeping 1
 * turn in N leaves the other N - 1 (OTEL_TRACES_SAMPLER=parentbased_traceidratio).
 */
const OBSERVABILITY_MODES = {
  on: [true, true, false],
  tracing: [true, false, false],
  sampledOut: [true, true, true],
  off: [false, false, false],
  off2: [false, false, false],
} as const;
type ObservabilityMode = keyof typeof OBSERVABILITY_MODES;
const MODE_NAMES = Object.keys(OBSERVABILITY_MODES) as ObservabilityMode[];

/** Turns before the rounds: a process keeps getting faster for its first ~2,000 (V8 tiering the hot paths up). */
const WARM_TURNS = 2500;
/** Calls of LOAD_CLIENTS turns before (o)'s loaded rounds, on processes already warm. */
const LOADED_WARM_CALLS = 50;
/**
 * Turns per setting and round, back to back: a block's median is steadier than one turn (a GC
 * pause, the machine's neighbours), and only a block's first turn follows a switch.
 */
const BLOCK_TURNS = 8;
/**
 * Pause after a block, long enough for its background work (relay publish, batched rate-limit
 * debit) to end under the block's own setting, before the next one is switched to.
 */
const PAUSE_MS = 40;

/** How (o) drives one stack. */
interface ObservabilityTarget {
  /** Turns each `turn` call runs at once, one per client. */
  clients: number;
  /** One sync chat turn per client at once, each sending `headers()`; each turn's ms. */
  turn(headers?: () => Record<string, string> | undefined): Promise<number[]>;
  /** Switches every process that serves the turns to `mode`. */
  setMode(mode: ObservabilityMode): Promise<void>;
  /** CPU ms used so far by the processes that serve the turns. */
  cpuMs(): number;
  /** Exports the spans ended so far to the sink. */
  flush(): Promise<void>;
}

/** What (o) measured on one stack, per setting: each round's block median and CPU per turn (ms). */
interface ObservabilityRun {
  times: Record<ObservabilityMode, number[]>;
  cpu: Record<ObservabilityMode, number[]>;
  /** Spans the sink received per recorded turn ("on" and "tracing only"; a sampled-out turn records none). */
  spansPerTurn: number;
  /** The machine's load average when the rounds ended. */
  load: number;
}

/** A sampled-out caller's traceparent, a trace of its own per turn. */
function sampledOutHeaders(): Record<string, string> {
  const id = () => randomUUID().replaceAll("-", "");
  return { traceparent: `00-${id()}-${id().slice(0, 16)}-00` };
}

/**
 * `warmCalls` calls of target.turn with everything on, then `rounds` rounds, each running a
 * block of BLOCK_TURNS calls per setting in a fresh random order (seeded by `seed`); a block's
 * median is over every client's turns.
 */
async function observabilityRounds(
  target: ObservabilityTarget,
  sink: { count(): Promise<number> },
  rounds: number,
  seed: number,
  warmCalls = WARM_TURNS,
): Promise<ObservabilityRun> {
  const random = seededRandom(seed);
  const times = Object.fromEntries(MODE_NAMES.map((n) => [n, [] as number[]])) as ObservabilityRun["times"];
  const cpu = Object.fromEntries(MODE_NAMES.map((n) => [n, [] as number[]])) as ObservabilityRun["cpu"];
  await target.setMode("on");
  for (let t = 0; t < warmCalls; t++) await target.turn();
  await target.flush();
  const spansBefore = await sink.count();
  for (let r = 0; r < rounds; r++) {
    for (const mode of shuffled(MODE_NAMES, random)) {
      await target.setMode(mode);
      const started = target.cpuMs();
      const block: number[] = [];
      const headers = OBSERVABILITY_MODES[mode][2] ? sampledOutHeaders : () => undefined;
      for (let t = 0; t < BLOCK_TURNS; t++) block.push(...(await target.turn(headers)));
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
      times[mode].push(quantile(block, 0.5));
      cpu[mode].push((target.cpuMs() - started) / block.length);
    }
  }
  await target.setMode("on");
  await target.flush();
  const spansPerTurn = ((await sink.count()) - spansBefore) / (2 * rounds * BLOCK_TURNS * target.clients);
  return { times, cpu, spansPerTurn, load: loadavg()[0] };
}

/** (o)'s figures of one run: the lines it prints and the per-turn shares the verdict takes. */
function observabilityFigures(run: ObservabilityRun) {
  const { times, cpu } = run;
  const p50 = Object.fromEntries(MODE_NAMES.map((n) => [n, quantile(times[n], 0.5)])) as Record<
    ObservabilityMode,
    number
  >;
  const paired = (mode: ObservabilityMode) => times[mode].map((t, i) => t - times.off[i]);
  const share = (mode: ObservabilityMode) => (quantile(paired(mode), 0.5) / p50.off) * 100;
  // Standard error of a median of per-round differences (1.2533 σ/√n), in % of p50(off).
  const stdErr = (mode: ObservabilityMode) => {
    const d = paired(mode);
    const mean = d.reduce((a, b) => a + b, 0) / d.length;
    const sd = Math.sqrt(d.reduce((a, b) => a + (b - mean) ** 2, 0) / (d.length - 1));
    return ((1.2533 * sd) / Math.sqrt(d.length) / p50.off) * 100;
  };
  const meanCpu = (mode: ObservabilityMode) => cpu[mode].reduce((a, b) => a + b, 0) / cpu[mode].length;
  const cpuShare = (mode: ObservabilityMode) => ((meanCpu(mode) - meanCpu("off")) / meanCpu("off")) * 100;
  const diff = (mode: ObservabilityMode) =>
    `${quantile(paired(mode), 0.5).toFixed(2)} ms (${sign(share(mode))} ± ${stdErr(mode).toFixed(1)}`;
  // Keeping 1 turn in 10 (parentbased_traceidratio 0.1): nine turns sampled out, one recorded.
  const oneInTen = 0.1 * share("on") + 0.9 * share("sampledOut");
  return {
    on: share("on"),
    floor: share("off2"),
    oneInTen,
    lines:
      `block medians' p50 on ${p50.on.toFixed(2)} ms, tracing only ${p50.tracing.toFixed(2)} ms, sampled out ${p50.sampledOut.toFixed(2)} ms, off ${p50.off.toFixed(2)} ms, off2 ${p50.off2.toFixed(2)} ms; ${run.spansPerTurn.toFixed(1)} spans per traced turn exported; load average ${run.load.toFixed(1)}` +
      `\n        median per-round difference to off: on ${diff("on")}), tracing only ${diff("tracing")}), both on with the turn sampled out by its caller ${diff("sampledOut")}; recording 1 turn in 10 ≈ ${sign(oneInTen)}), off2 ${diff("off2")}, noise floor)` +
      `\n        CPU per turn: on ${meanCpu("on").toFixed(2)} ms (${sign(cpuShare("on"))}), tracing only ${meanCpu("tracing").toFixed(2)} ms (${sign(cpuShare("tracing"))}), sampled out ${meanCpu("sampledOut").toFixed(2)} ms (${sign(cpuShare("sampledOut"))}), off ${meanCpu("off").toFixed(2)} ms, off2 ${meanCpu("off2").toFixed(2)} ms (${sign(cpuShare("off2"))})`,
  };
}

/** `x` (a percentage) signed, one decimal: "+3.1 %". */
function sign(x: number): string {
  return `${x >= 0 ? "+" : ""}${x.toFixed(1)} %`;
}

/**
 * (o) on the deployed shape: a `pnpm start` stack (a process per service) whose every service
 * process loads recording-switch.mjs, so each block's setting is switched in the same six
 * processes; spans go over OTLP/HTTP to `sink`; CPU is the six processes' (every thread).
 * `rounds` rounds with one client (`single`), then, on the same warm stack, `loadedRounds` with
 * LOAD_CLIENTS clients at once, (p)'s load (`loaded`).
 */
async function observabilityDeployed(
  infra: LocalInfra,
  sink: { url: string; count(): Promise<number> },
  rounds: number,
  loadedRounds: number,
): Promise<{ single: ObservabilityRun; loaded: ObservabilityRun }> {
  const switches = mkdtempSync(join(tmpdir(), "redline-bench-switch-"));
  const preload = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), "recording-switch.mjs")).href;
  const stack = await startProcessStack(infra, "bench_obs_deployed", {
    ...OFFLINE,
    ...UNLIMITED_ENV,
    METRICS_ADDR: "",
    OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "",
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import=${preload}`.trim(),
    BENCH_RECORDING_SWITCH_DIR: switches,
  });
  try {
    const pids = Object.values(readStackFile(stack.stack.dataDir)?.children ?? {}).map((c) => c?.pid);
    if (pids.length !== 6 || pids.some((p) => !p)) throw new Error(`(o): expected 6 service processes, got ${pids}`);
    const ask = (path: string) => Promise.all(pids.map((pid) => switchRequest(join(switches, `${pid}.sock`), path)));
    const chatStack = { call: stack.call, billingAddr: stack.stack.addrs.billing };
    const [client] = await chatClients(chatStack, 1, "bench-obs");
    const target: ObservabilityTarget = {
      clients: 1,
      turn: async (headers) => [await chatTurn(stack.call, client, headers?.())],
      async setMode(mode) {
        const [traced, metered] = OBSERVABILITY_MODES[mode];
        const answers = await ask(`/?tracing=${Number(traced)}&metrics=${Number(metered)}`);
        // Each process answers from the module its service set up: a mismatch means the switch
        // reached another copy of service-kit, and the figures would compare nothing.
        if (answers.some((a) => a.tracing !== traced || a.metrics !== metered))
          throw new Error(`(o): a service did not switch to ${mode}: ${JSON.stringify(answers)}`);
      },
      cpuMs: () => [...serviceCpuMs(stack.stack.dataDir).values()].reduce((a, b) => a + b, 0),
      flush: async () => {
        await ask("/flush");
      },
    };
    const single = await observabilityRounds(target, sink, rounds, 0x0b5e);
    const crowd = await chatClients(chatStack, LOAD_CLIENTS, "bench-obs-load");
    const loaded = await observabilityRounds(
      {
        ...target,
        clients: LOAD_CLIENTS,
        turn: (headers) => Promise.all(crowd.map((c) => chatTurn(stack.call, c, headers?.()))),
      },
      sink,
      loadedRounds,
      0x10ad,
      // The processes are warm from the single run; this warms the new clients' sessions.
      LOADED_WARM_CALLS,
    );
    return { single, loaded };
  } finally {
    await stack.stop();
    rmSync(switches, { recursive: true, force: true });
  }
}

/** GET `path` on a recording switch's socket; its JSON answer. */
function switchRequest(socketPath: string, path: string): Promise<{ tracing: boolean; metrics: boolean }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ socketPath, path }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        if (res.statusCode !== 200) reject(new Error(`recording switch ${socketPath}: ${res.statusCode} ${text}`));
        else {
          try {
            resolve(JSON.parse(text));
          } catch (err) {
            reject(err);
          }
        }
      });
    });
    req.on("error", reject);
    req.end();
  });
}

/**
 * (o): the cost of metrics and tracing on the sync chat path, on vs off with a noise floor, A/B
 * in the same processes: each round runs a block of turns per setting in a fresh random order,
 * switched by setTracingRecording and setMetricsRecording: both on, tracing only, both on with
 * every turn sampled out by its caller (what 9 turns in 10 cost when 1 in 10 is kept), and
 * neither twice ("off2" against "off" is the noise floor). Separate stacks per setting could not
 * tell 3 % apart: two identical stacks differed by up to 10 %, a difference of processes, not of
 * settings. Spans are exported over OTLP/HTTP to a sink in another process.
 *
 * Run twice. The verdict takes the deployed shape: a process per service, as `pnpm start` and
 * Kubernetes run them, switched through recording-switch.mjs, with one client (latency on an idle
 * machine) and then with (p)'s LOAD_CLIENTS at once (there the machine's cores are the limit, and
 * p50 grows with the CPU a turn takes, export and collection included). Beside it, every service in the
 * bench's own process (the test stack), the earlier design: there the SDK's code stays hot in one
 * process, while in the deployed shape each process runs its one to three spans a turn between
 * the others' work, with cold caches, and a span costs two to three times as much (the same SDK
 * functions, each slower in the profile). What runs whether requests come or not (prom-client's
 * collectors, the span exporter's timer) is measured apart, as the CPU per second three idle
 * process stacks burn (both on, neither, neither again); the difference as a share of one core
 * is added to the one-client verdict, an upper bound of what it takes from a turn. The verdict
 * needs the one-client noise floor under 1.5 %, and both runs under 3 %.
 */
export async function benchObservabilityOverhead(
  results: BenchResult[],
  infra: LocalInfra,
  rounds = 250,
  loadedRounds = 100,
): Promise<void> {
  // Before tracing is set up in this process: the hook's cost when tracing is off.
  const hookNs = await offHookCostNs();
  const sink = await startSpanSink();
  let deployed: { single: ObservabilityRun; loaded: ObservabilityRun };
  let oneProcess: ObservabilityRun;
  try {
    deployed = await observabilityDeployed(infra, sink, rounds, loadedRounds);
    oneProcess = await observabilityInProcess(infra, sink, rounds);
  } catch (err) {
    sink.close();
    throw err;
  }
  const idle = await idleObservabilityBurn(infra, sink.url);
  sink.close();

  const main = observabilityFigures(deployed.single);
  const loaded = observabilityFigures(deployed.loaded);
  const single = observabilityFigures(oneProcess);
  // Idle CPU in ms per second over 1000 ms per second of one core, in %.
  const background = (idle.on - idle.off) / 10;
  const judged = Math.abs(main.floor) < 1.5;
  const added = main.on + Math.max(0, background);
  // Under load the collectors' background CPU is already inside the turns' latency.
  const addedLoaded = loaded.on;
  results.push({
    name:
      `(o) metrics and tracing on the sync chat path, on vs off switched in the same processes, ${rounds} rounds of ${BLOCK_TURNS} turns per setting after ${WARM_TURNS} warm-up turns` +
      `\n      deployed shape (a process per service), one client: ${main.lines}` +
      `\n      deployed shape, ${LOAD_CLIENTS} clients at once ((p)'s load; ${loadedRounds} rounds, each setting's block ${BLOCK_TURNS} × ${LOAD_CLIENTS} turns): ${loaded.lines}` +
      `\n      every service in one process (the SDK's code hot, for reference): ${single.lines}` +
      `\n      idle, six service processes per stack: on ${idle.on.toFixed(1)} ms/s of CPU, off ${idle.off.toFixed(1)} ms/s, off2 ${idle.off2.toFixed(1)} ms/s: the collectors take ${sign(background)} of one core` +
      `\n      off, one tracing hook (withSpan) costs ${hookNs.toFixed(0)} ns over a direct call`,
    value: judged
      ? `metrics + tracing add ${sign(added)} on the deployed shape with one client (${sign(main.on)} of p50 per turn, ${sign(background)} of a core in the background; recording 1 turn in 10 ≈ ${sign(main.oneInTen + Math.max(0, background))}) and ${sign(addedLoaded)} with ${LOAD_CLIENTS} clients at once (1 in 10 ≈ ${sign(loaded.oneInTen)}); in one process ${sign(single.on + Math.max(0, background))}`
      : `inconclusive on this machine now (noise floor ${sign(main.floor)} of p50)`,
    target: "< 3 % of p50, at one client and under load",
    pass: judged && added < 3 && addedLoaded < 3,
  });
}

/**
 * (o) with every service in the bench's process (the test stack), tracing set up here and
 * exporting to `sink`; CPU is this process's.
 */
async function observabilityInProcess(
  infra: LocalInfra,
  sink: { url: string; count(): Promise<number> },
  rounds: number,
): Promise<ObservabilityRun> {
  const tracing = initTracing("bench", { tracesUrl: `${sink.url}/v1/traces`, serviceName: "redline-bench" });
  const stack = await startTestStack(infra, { name: "bench_obs", rateLimits: UNLIMITED });
  try {
    const [client] = await chatClients({ call: stack.call, billingAddr: stack.addrs.billing }, 1, "bench-obs");
    const target: ObservabilityTarget = {
      clients: 1,
      turn: async (headers) => [await chatTurn(stack.call, client, headers?.())],
      async setMode(mode) {
        const [traced, metered] = OBSERVABILITY_MODES[mode];
        setTracingRecording(traced);
        setMetricsRecording(metered);
      },
      cpuMs() {
        const used = process.cpuUsage();
        return (used.user + used.system) / 1000;
      },
      flush: () => tracing.flush(),
    };
    return await observabilityRounds(target, sink, rounds, 0x0b5e);
  } finally {
    // Later benchmarks in this process run untraced, as before this one.
    setTracingRecording(false);
    setMetricsRecording(true);
    await stack.close();
    await tracing.flush();
  }
}

/**
 * An OTLP/HTTP trace sink in a process of its own, so parsing what is exported costs the
 * measured process nothing, as a collector elsewhere would: `url` is the base endpoint, `count`
 * the spans received so far.
 */
async function startSpanSink(): Promise<{ url: string; count(): Promise<number>; close(): void }> {
  const code = `
    const http = require("node:http");
    let spans = 0;
    const KEY = Buffer.from('"startTimeUnixNano"');
    const server = http.createServer((req, res) => {
      if (req.method === "GET") return res.end(String(spans));
      const chunks = [];
      req.on("data", (c) => chunks.push(c));
      // Spans are counted by a key only a span has (events have "timeUnixNano", links no time),
      // not parsed: parsing half a megabyte a second here competes with the measured process for
      // the machine's cores, which a collector elsewhere does not.
      req.on("end", () => {
        const body = Buffer.concat(chunks);
        for (let at = body.indexOf(KEY); at !== -1; at = body.indexOf(KEY, at + KEY.length)) spans++;
        res.setHeader("Content-Type", "application/json");
        res.end("{}");
      });
    });
    server.listen(0, "127.0.0.1", () => console.log(server.address().port));`;
  const child = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout.once("data", (d: Buffer) => resolve(d.toString("utf8").trim()));
    child.once("exit", (c) => reject(new Error(`the span sink exited (${c})`)));
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    count: async () => Number(await (await fetch(`${url}/count`)).text()),
    close: () => child.kill(),
  };
}

/**
 * CPU per second (ms/s) the six service processes of an idle stack burn: one with metrics and
 * tracing on (spans to `otlpUrl`), one with neither, and a second with neither (the noise
 * floor); a short settle after start, then 8 windows of 4 s with no request, each process's quietest.
 */
async function idleObservabilityBurn(
  infra: LocalInfra,
  otlpUrl: string,
): Promise<{ on: number; off: number; off2: number }> {
  const noOtel = { OTEL_EXPORTER_OTLP_ENDPOINT: "", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "" };
  const envs = {
    on: { ...OFFLINE, ...noOtel, METRICS_ADDR: "", OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl },
    off: { ...OFFLINE, ...noOtel, METRICS_ADDR: "off" },
    off2: { ...OFFLINE, ...noOtel, METRICS_ADDR: "off" },
  };
  // Each service process ties itself to this one with an exit listener: 18 of them here.
  process.setMaxListeners(Math.max(process.getMaxListeners(), 3 * 6 + 10));
  const stacks: ProcessStack[] = [];
  try {
    for (const [name, env] of Object.entries(envs))
      stacks.push(await startProcessStack(infra, `bench_idle_${name}`, env));
    if (!stacks[0].stack.metrics.gateway || stacks[1].stack.metrics.gateway)
      throw new Error("METRICS_ADDR=off was not applied");
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    // Each process's quietest window, summed: now and then one process burns 20-80 ms in a second
    // (V8 collecting after start-up, whichever the setting), so a stack's quietest window could
    // still hold one of six processes' bursts, which is not what the collectors cost.
    const windows = 8;
    const windowMs = 4_000;
    const rates = stacks.map(() => new Map<string, number>());
    for (let w = 0; w < windows; w++) {
      const before = stacks.map((s) => serviceCpuMs(s.stack.dataDir));
      await new Promise((resolve) => setTimeout(resolve, windowMs));
      for (const [i, s] of stacks.entries())
        for (const [service, ms] of serviceCpuMs(s.stack.dataDir)) {
          const rate = ((ms - (before[i].get(service) ?? ms)) * 1000) / windowMs;
          // Below zero when a thread ended in the window (one run showed -145 ms/s): its CPU left
          // the sum of live threads, so that window says nothing about this process.
          if (rate >= 0) rates[i].set(service, Math.min(rates[i].get(service) ?? rate, rate));
        }
    }
    const [on, off, off2] = rates.map((r) => [...r.values()].reduce((a, b) => a + b, 0));
    return { on, off, off2 };
  } finally {
    await Promise.all(stacks.map((s) => s.stop()));
  }
}

/**
 * CPU ms used so far by each service process in `dataDir`'s stack.json, by service, every thread
 * of each (V8's GC and compiler threads too), from the nanosecond schedstat counters:
 * /proc/<pid>/stat's 10 ms ticks are too coarse for a few ms a second.
 */
function serviceCpuMs(dataDir: string): Map<string, number> {
  const used = new Map<string, number>();
  for (const [service, child] of Object.entries(readStackFile(dataDir)?.children ?? {})) {
    if (!child) continue;
    let ns = 0;
    try {
      for (const tid of readdirSync(`/proc/${child.pid}/task`))
        ns += Number(readFileSync(`/proc/${child.pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // gone (or a thread ended between the listing and the read): counted as far as read
    }
    used.set(service, ns / 1e6);
  }
  return used;
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
