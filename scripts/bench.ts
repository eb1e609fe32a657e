// `pnpm bench`: speed and size targets, each printed as a ratio against a baseline measured in
// the same run on this machine (never as absolute timings checked by tests).
//   (a) a one-chunk edit applied and committed on a document 10x larger vs 1x (target <= 1.5)
//   (b) bytes sent to the model in one turn on a 200-page document vs its size (target <= 5 %)
//   (c) GET /v1/sessions through gateway + gRPC vs the same queries issued to Postgres
//   (d) doc-event visibility: a save in one session seen by 1 and by 50 polling sessions, p50 and p99
//   (e) human saves per second vs a plain Postgres transaction of the same rows
//   (f) async chat: POST /v1/chat/async to the first SSE event and to final, minus the model's latency
//   (g)-(i) ingest: docx → HTML vs pandoc, pdf → text vs pdftotext, HTML → pdf (scripts/lib/bench-ingest.ts)
//   (j) offline engine parse of adversarial messages, equal characters per size, 12.5k×8 vs 100k×1 (scripts/lib/bench-offline.ts)
//   (k) ingest scaling: txt export, html → docx export, HTML upload at 1-8 MB (scripts/lib/bench-scaling.ts)
//   (l) sync chat p50 with the rate limiter and Idempotency-Key on vs off, side by side (target: < 2 ms added)
//   (m) chat p50 with metrics on vs METRICS_ADDR=off, separate processes (target < 3 %) (scripts/lib/bench-metrics.ts)
//   (n) GET /health and GET /ready req/s vs an authenticated list (scripts/lib/bench-metrics.ts)
//   (o) tracing, and metrics + tracing, on vs off on the sync chat path, switched round by round in one process, with an off-vs-off noise floor and the collectors' idle CPU (target < 3 % of p50) (scripts/lib/bench-chat.ts)
//   (p) sync chat turns/s, 8 clients on a small stored document, vs plain Postgres transactions of the same rows (scripts/lib/bench-chat.ts)
//   (q) faults: Postgres restarted, NATS down, S3 down, and kill -9 of each service, under the mixed
//       load vs no fault: longest client wait, failed requests by status, restart and recovery time
//       (scripts/lib/bench-faults.ts, scripts/lib/kill-faults.ts)
//   (r) docx edited in place: untouched paragraphs byte-identical after one edit (target 100 %), export
//       time beside the generated export and pandoc html → docx (scripts/lib/bench-docx-inplace.ts)
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { billingV1, documentsV1 } from "@redline/grpc-stubs";
import { WorkingDocument } from "@redline/html-chunks";
import { createTestDatabase, freePort, infraEnv, startLocalInfra } from "@redline/local-infra";
import { createRpcClient, type Principal } from "@redline/service-kit";
import { sampleContract } from "../test/support/fixtures.js";
import { readSse } from "../test/support/jobs.js";
import {
  delayed,
  lastToolResultJson,
  type ScriptedOpenAi,
  startScriptedOpenAi,
} from "../test/support/scripted-openai.js";
import { startTestStack, type TestStack } from "../test/support/stack.js";
import { benchChatThroughput, benchObservabilityOverhead } from "./lib/bench-chat.js";
import { benchDocxInPlace } from "./lib/bench-docx-inplace.js";
import { benchFaults } from "./lib/bench-faults.js";
import { benchIngest } from "./lib/bench-ingest.js";
import { benchHealth, benchMetricsOverhead } from "./lib/bench-metrics.js";
import { benchOfflineParse } from "./lib/bench-offline.js";
import { benchIngestScaling } from "./lib/bench-scaling.js";
import { caller, startProcessStack } from "./lib/bench-stack.js";
import { RUNTIME_ARGS, startStack } from "./lib/stack.js";
import { quantile, seededRandom, shuffled } from "./lib/stats.js";

const results: { name: string; value: string; target?: string; pass?: boolean }[] = [];

/** A contract-like document of `sections` sections, each about one printed page (~3,000 characters of text in 10 chunks). */
function generateDocument(sections: number): string {
  const parts: string[] = [];
  for (let s = 1; s <= sections; s++) {
    parts.push(`<h2>Section ${s}: Obligations of the parties</h2>`);
    for (let p = 0; p < 7; p++) {
      parts.push(
        `<p>Clause ${s}.${p + 1}. The Provider shall deliver the services described in Schedule ${s} with <strong>reasonable skill and care</strong>, in accordance with good industry practice and the service levels agreed in writing between the parties from time to time. Where a deliverable is rejected, the Provider shall remedy the defect within ten (10) business days at its own cost, and the Client may withhold payment of the related fee until the remedied deliverable has been accepted in writing. Nothing in this clause limits any other right or remedy of the Client.</p>`,
      );
    }
    parts.push(`<ul><li>Deliverable ${s}-A</li><li>Deliverable ${s}-B</li></ul>`);
    parts.push(
      `<table style="border-collapse: collapse"><tr><th>Item</th><th>Amount</th></tr><tr><td>Fee ${s}</td><td style="text-align: right">${s * 1000}</td></tr></table>`,
    );
  }
  return parts.join("\n");
}

async function principalOf(stack: TestStack, key: string): Promise<Principal> {
  const p = (await stack.billing.resolveApiKey({ apiKey: key })).principal;
  if (!p) throw new Error("no principal");
  return p;
}

/** (a): median time of replace + operations() + CommitOperations on a 1x and a 10x document. */
async function benchCommit(stack: TestStack, documentsAddr: string, key: string) {
  const principal = await principalOf(stack, key);
  const documents = createRpcClient(documentsV1.DocumentsServiceService, documentsAddr);
  const setup = async (sections: number) => {
    const created = await documents.createDocument(
      { html: generateDocument(sections), title: "", sessionId: "bench" },
      { principal },
    );
    const chunks = created.chunks;
    return {
      documentId: created.document?.documentId ?? "",
      version: created.document?.versionId ?? "",
      chunks,
      target: chunks[Math.floor(chunks.length / 2)].chunkId,
      times: [] as number[],
    };
  };
  const edit = async (doc: Awaited<ReturnType<typeof setup>>, i: number) => {
    const started = performance.now();
    const working = new WorkingDocument(doc.chunks);
    working.replace(doc.target, `<p>Edited clause, revision ${i}.</p>`, "bench edit");
    const ops = working.operations();
    const res = await documents.commitOperations(
      {
        documentId: doc.documentId,
        baseVersionId: doc.version,
        sessionId: "bench",
        summary: "bench",
        returnChunks: false,
        idempotencyKey: "",
        operations: ops.map((op) => ({
          kind: documentsV1.OperationKind.OPERATION_KIND_REPLACE,
          chunkId: op.chunkId,
          html: op.kind === "delete" ? "" : op.html,
          afterChunkId: "",
          explanation: op.explanation,
        })),
      },
      { principal },
    );
    doc.version = res.document?.versionId ?? doc.version;
    return performance.now() - started;
  };
  const smallDoc = await setup(20);
  const largeDoc = await setup(200);
  // Interleaved, after a warm-up, so neither size benefits from running later.
  for (let i = 0; i < 60; i++) {
    for (const doc of i % 2 === 0 ? [smallDoc, largeDoc] : [largeDoc, smallDoc]) {
      const ms = await edit(doc, i);
      if (i >= 10) doc.times.push(ms);
    }
  }
  const small = { p50: quantile(smallDoc.times, 0.5), chunks: smallDoc.chunks.length };
  const large = { p50: quantile(largeDoc.times, 0.5), chunks: largeDoc.chunks.length };
  documents.close();
  const ratio = large.p50 / small.p50;
  results.push({
    name: `(a) one-chunk edit+commit: ${small.chunks} chunks p50 ${small.p50.toFixed(2)} ms, ${large.chunks} chunks p50 ${large.p50.toFixed(2)} ms`,
    value: `ratio ${ratio.toFixed(2)}`,
    target: "<= 1.5",
    pass: ratio <= 1.5,
  });
}

/** The OpenAI-compatible engine config of a scripted model at `url` (every tier one model). */
function scriptedEngine(url: string, maxSteps: number) {
  return {
    baseURL: url,
    apiKey: "bench",
    models: { core: "m", turbo: "m", pro: "m", max: "m" },
    requestTimeoutMs: 60_000,
    maxSteps,
  };
}

/** (b): a scripted model turn on a 200-page document; bytes of every request body it received. */
async function benchModelBytes(infra: Parameters<typeof startTestStack>[0]) {
  const model = await startScriptedOpenAi();
  const stack = await startTestStack(infra, {
    name: "bench_llm",
    openai: scriptedEngine(model.url, 12),
  });
  try {
    const key = await stack.createKey("bench-llm", { plan: "pro" });
    const html = generateDocument(200);
    model.push(
      { toolCalls: [{ name: "get_outline", arguments: JSON.stringify({ headings_only: true }) }] },
      { toolCalls: [{ name: "search_text", arguments: JSON.stringify({ query: "Clause 150.3." }) }] },
      (req) => {
        const id = lastToolResultJson<{ matches: { chunk_id: string }[] }>(req).matches[0].chunk_id;
        return { toolCalls: [{ name: "read_chunks", arguments: JSON.stringify({ chunk_ids: [id] }) }] };
      },
      (req) => {
        const id = lastToolResultJson<{ chunks: { chunk_id: string }[] }>(req).chunks[0].chunk_id;
        return {
          toolCalls: [
            {
              name: "replace_chunk",
              arguments: JSON.stringify({
                chunk_id: id,
                html: "<p>Clause 150.3 is deleted.</p>",
                explanation: "bench",
              }),
            },
          ],
        };
      },
      { content: "Done." },
    );
    const before = model.requests.length;
    const res = await stack.call("POST", "/v1/chat", {
      key,
      body: { message: "Delete clause 150.3", document_html: html, response_mode: "compact" },
    });
    if (res.status !== 200) throw new Error(`chat failed: ${res.status} ${await res.text()}`);
    const sent = model.requests.slice(before).reduce((sum, r) => sum + Buffer.byteLength(JSON.stringify(r)), 0);
    const size = Buffer.byteLength(html);
    const ratio = sent / size;
    results.push({
      name: `(b) bytes to the model in one turn: ${sent.toLocaleString()} B over ${model.requests.length - before} requests, document ${size.toLocaleString()} B`,
      value: `${(ratio * 100).toFixed(2)} %`,
      target: "<= 5 %",
      pass: ratio <= 0.05,
    });
  } finally {
    await stack.close();
    await model.close();
  }
}

/** (c): sessions list throughput through the gateway vs the same queries straight to Postgres. */
async function benchSessions(stack: TestStack, key: string) {
  const principal = await principalOf(stack, key);
  for (let i = 0; i < 30; i++) {
    await stack.call("POST", "/v1/chat", {
      key,
      body: { message: 'show section "x"', document_html: `<h1>Doc ${i}</h1><p>Body ${i}</p>` },
    });
  }
  const db = stack.sessionsDb;
  const direct = async () => {
    const rows = await db("sessions.sessions")
      .where({ owner_id: principal.ownerId })
      .orderBy("updated_at", "desc")
      .limit(50);
    const ids = rows.map((r: { id: string }) => r.id);
    await Promise.all([
      db("sessions.messages")
        .select("session_id")
        .count("* as count")
        .whereIn("session_id", ids)
        .andWhere({ active: true })
        .groupBy("session_id"),
      db("sessions.roster").whereIn("session_id", ids).whereNull("closed_at"),
    ]);
  };
  const viaGateway = async () => {
    const res = await stack.call("GET", "/v1/sessions", { key });
    if (res.status !== 200) throw new Error(`GET /v1/sessions → ${res.status}`);
    await res.arrayBuffer();
  };
  const throughput = async (fn: () => Promise<void>) => {
    const total = 600;
    const concurrency = 8;
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < total) {
          next++;
          await fn();
        }
      }),
    );
    return total / ((performance.now() - started) / 1000);
  };
  await throughput(direct);
  await throughput(viaGateway);
  const pg = await throughput(direct);
  const gw = await throughput(viaGateway);
  results.push({
    name: `(c) GET /v1/sessions: gateway+gRPC ${gw.toFixed(0)} req/s, Postgres directly ${pg.toFixed(0)} req/s`,
    value: `ratio ${(gw / pg).toFixed(2)}`,
  });
}

/** POSTs JSON through the gateway and parses the answer (bench helpers for (d) and (e)). */
async function postJson(stack: TestStack, key: string, path: string, body?: unknown) {
  const res = await stack.call("POST", path, { key, body });
  if (res.status !== 200) throw new Error(`POST ${path} → ${res.status} ${await res.text()}`);
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON of the API under benchmark
  return (await res.json()) as Record<string, any>;
}

/** One paragraph chunk's HTML with its text replaced (the chunk keeps its id). */
function withChunkText(html: string, chunkId: string, text: string): string {
  return html
    .split("\n")
    .map((part) => (part.includes(`data-chunk-id="${chunkId}"`) ? `<p data-chunk-id="${chunkId}">${text}</p>` : part))
    .join("\n");
}

/** A new session with one document of `paragraphs` paragraphs saved: ids, the save's reply, its first chunk. */
async function seedDocument(stack: TestStack, key: string, paragraphs: number) {
  const html = Array.from({ length: paragraphs }, (_, i) => `<p>Paragraph ${i}</p>`).join("");
  const sid = (await postJson(stack, key, "/v1/sessions/init")).session_id as string;
  const slot = (await postJson(stack, key, `/v1/sessions/${sid}/documents/blank`)).document.document_id as string;
  const saved = await postJson(stack, key, `/v1/sessions/${sid}/documents/${slot}/save`, { html });
  const chunkId: string = /data-chunk-id="([^"]+)"/.exec(saved.html)?.[1] ?? "";
  return { sid, slot, saved, documentId: saved.durable_document_id as string, chunkId };
}

/**
 * (d): doc-event visibility. After each save in one session returns, all 50 other sessions poll
 * GET doc-events at once from their cursors; latency from sending the save to each poller's
 * answer carrying the event, p50 and p99, and how many of the polls already saw it (the outbox
 * row commits with the save, so every poll issued after the ack must).
 */
async function benchDocEvents(stack: TestStack, key: string) {
  const POLLERS = 50;
  const COMMITS = 20;
  const seeded = await seedDocument(stack, key, 20);
  const { sid: writer, slot, documentId, chunkId } = seeded;
  let saved = seeded.saved;
  const pollers: { sid: string; cursor: number }[] = [];
  for (let i = 0; i < POLLERS; i++) {
    pollers.push({
      sid: (await postJson(stack, key, "/v1/sessions/init", { document_ids: [documentId] })).session_id,
      cursor: 0,
    });
  }
  const poll = async (p: { sid: string; cursor: number }) => {
    const res = await stack.call("GET", `/v1/sessions/${p.sid}/doc-events?after_id=${p.cursor}`, { key });
    const page = (await res.json()) as { events: { version_id: string }[]; last_id: number };
    p.cursor = page.last_id;
    return page.events.map((e) => e.version_id);
  };
  await Promise.all(pollers.map(poll));
  const single: number[] = [];
  const fanOut: number[] = [];
  let seen = 0;
  for (let i = 0; i < COMMITS; i++) {
    const started = performance.now();
    saved = await postJson(stack, key, `/v1/sessions/${writer}/documents/${slot}/save`, {
      html: withChunkText(saved.html, chunkId, `Edit ${i}`),
      base_version_id: saved.version_id,
    });
    const version = saved.version_id as string;
    if (i % 2 === 0) {
      // One poller alone: the floor of commit → visible.
      if ((await poll(pollers[0])).includes(version)) seen++;
      single.push(performance.now() - started);
      await Promise.all(pollers.slice(1).map(poll));
    } else {
      await Promise.all(
        pollers.map(async (p) => {
          if ((await poll(p)).includes(version)) seen++;
          fanOut.push(performance.now() - started);
        }),
      );
    }
  }
  const polls = single.length + fanOut.length;
  results.push({
    name: `(d) doc-event visibility, save sent → event in a poll issued after the save's ack (${seen} of ${polls} polls saw it): one poller, and 50 pollers at once`,
    value: `one: p50 ${quantile(single, 0.5).toFixed(1)} ms, p99 ${quantile(single, 0.99).toFixed(1)} ms; 50: p50 ${quantile(fanOut, 0.5).toFixed(1)} ms, p99 ${quantile(fanOut, 0.99).toFixed(1)} ms`,
  });
}

/**
 * (e): human saves per second (one chunk changed, through gateway, sessions and documents) vs a
 * plain Postgres transaction writing the same rows (close one revision, insert one revision,
 * a version, the head update and an outbox event), both sequential.
 */
async function benchSaves(stack: TestStack, key: string) {
  const ROUNDS = 150;
  const seeded = await seedDocument(stack, key, 50);
  const { sid, slot, documentId, chunkId } = seeded;
  let saved = seeded.saved;
  const viaService = async () => {
    const started = performance.now();
    for (let i = 0; i < ROUNDS; i++) {
      saved = await postJson(stack, key, `/v1/sessions/${sid}/documents/${slot}/save`, {
        html: withChunkText(saved.html, chunkId, `Save ${i} ${performance.now()}`),
        base_version_id: saved.version_id,
      });
    }
    return ROUNDS / ((performance.now() - started) / 1000);
  };
  const db = stack.documentsDb;
  const direct = async () => {
    const started = performance.now();
    for (let i = 0; i < ROUNDS; i++) {
      await db.transaction(async (trx) => {
        const doc = await trx("documents.documents").where({ id: documentId }).forUpdate().first();
        // The same outbox ordering lock every commit takes.
        await trx.raw("select pg_advisory_xact_lock(hashtext('redline.documents.outbox'))");
        const seq = doc.head_seq + 1;
        const [live] = await trx("documents.chunk_revisions")
          .where({ document_id: documentId, chunk_id: chunkId })
          .whereNull("valid_to")
          .update({ valid_to: seq })
          .returning("*");
        await trx("documents.chunk_revisions").insert({
          ...live,
          html: `<p>Direct ${i}</p>`,
          valid_from: seq,
          valid_to: null,
        });
        const versionId = randomUUID();
        await trx("documents.versions").insert({
          id: versionId,
          document_id: documentId,
          seq,
          parent_id: doc.head_version_id,
          session_id: sid,
          kind: "edit",
          summary: "bench",
        });
        await trx("documents.documents")
          .where({ id: documentId })
          .update({ head_version_id: versionId, head_seq: seq, updated_at: trx.fn.now() });
        await trx("documents.outbox").insert({
          event_type: "document_updated",
          owner_id: doc.owner_id,
          document_id: documentId,
          version_id: versionId,
          session_id: sid,
          payload: JSON.stringify({ kind: "bench" }),
        });
      });
    }
    return ROUNDS / ((performance.now() - started) / 1000);
  };
  const service = await viaService();
  const pg = await direct();
  results.push({
    name: `(e) saves: gateway+sessions+documents ${service.toFixed(0)} saves/s, plain Postgres transaction of the same rows ${pg.toFixed(0)} tx/s`,
    value: `ratio ${(service / pg).toFixed(2)}`,
  });
}

/** Model latency of each scripted answer in (f): subtracted from the time to `final`. */
const ASYNC_MODEL_DELAY_MS = 50;

/**
 * (f): POST /v1/chat/async → first SSE event, and → `final`, minus the scripted model's own
 * latency: the overhead of jobs, workers, Postgres events, NATS and the stream, p50 and p99.
 */
/** Async and sync turns measured against one gateway; times in ms minus the model's latency. */
async function measureAsync(model: ScriptedOpenAi, call: TestStack["call"], url: string, key: string, rounds: number) {
  const html = generateDocument(3);
  const first: number[] = [];
  const final: number[] = [];
  for (let i = 0; i < rounds + 3; i++) {
    model.push(delayed(ASYNC_MODEL_DELAY_MS, { content: "Nothing to change." }));
    const started = performance.now();
    const created = await call("POST", "/v1/chat/async", {
      key,
      body: { message: "Check the document", document_html: html },
    });
    if (created.status !== 202) throw new Error(`async chat failed: ${created.status} ${await created.text()}`);
    const job = (await created.json()) as { job_id: string; session_id: string };
    let firstAt = 0;
    let finalAt = 0;
    const read = await readSse({ url }, `/v1/chat/${job.session_id}/stream?job_id=${job.job_id}`, {
      headers: { Authorization: `Bearer ${key}` },
      stopAfter: (e) => {
        firstAt ||= performance.now();
        if (e.event === "final") finalAt = performance.now();
        return e.event === "final";
      },
    });
    if (!finalAt) throw new Error(`no final event: ${JSON.stringify(read.events.map((e) => e.event))}`);
    // The first rounds warm up connections and JIT.
    if (i < 3) continue;
    first.push(firstAt - started);
    final.push(finalAt - started - ASYNC_MODEL_DELAY_MS);
  }
  // Baseline in the same run: the same turn through sync POST /v1/chat, minus the same model latency.
  const sync: number[] = [];
  for (let i = 0; i < rounds + 3; i++) {
    model.push(delayed(ASYNC_MODEL_DELAY_MS, { content: "Nothing to change." }));
    const started = performance.now();
    const res = await call("POST", "/v1/chat", { key, body: { message: "Check the document", document_html: html } });
    if (res.status !== 200) throw new Error(`chat failed: ${res.status} ${await res.text()}`);
    await res.json();
    if (i >= 3) sync.push(performance.now() - started - ASYNC_MODEL_DELAY_MS);
  }
  return { first, final, sync };
}

/**
 * (f): POST /v1/chat/async → first SSE event, and → `final`, minus the scripted model's own
 * latency, on the deployed shape (`pnpm start`: every service its own process) — the target —
 * and, for reference, on the single-process test stack where all services share one event loop.
 */
async function benchAsyncOverhead(infra: Parameters<typeof startTestStack>[0]) {
  const model = await startScriptedOpenAi();
  const openaiEnv = { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: "bench", OPENAI_MAX_STEPS: "4" };
  const rounds = 40;
  const processes = await startProcessStack(infra, "bench_procs", openaiEnv);
  const inProcess = await startTestStack(infra, {
    name: "bench_async",
    openai: scriptedEngine(model.url, 4),
  });
  try {
    const deployed = await measureAsync(model, processes.call, processes.url, processes.key, rounds);
    const single = await measureAsync(
      model,
      inProcess.call,
      inProcess.url,
      await inProcess.createKey("bench-async", { plan: "pro" }),
      rounds,
    );
    const line = (label: string, m: Awaited<ReturnType<typeof measureAsync>>) =>
      `${label}: POST → first SSE event p50 ${quantile(m.first, 0.5).toFixed(1)} ms, p99 ${quantile(m.first, 0.99).toFixed(1)} ms; POST → final minus the model's ${ASYNC_MODEL_DELAY_MS} ms p50 ${quantile(m.final, 0.5).toFixed(1)} ms, p99 ${quantile(m.final, 0.99).toFixed(1)} ms; sync POST /v1/chat minus the model p50 ${quantile(m.sync, 0.5).toFixed(1)} ms`;
    const p50 = quantile(deployed.final, 0.5);
    results.push({
      name: `(f) async overhead over ${rounds} jobs\n      ${line("separate processes (pnpm start)", deployed)}\n      ${line("one process (test stack, for reference)", single)}`,
      value: `p50 ${p50.toFixed(1)} ms (separate processes)`,
      target: "p50 <= 50 ms",
      pass: p50 <= 50,
    });
  } finally {
    await inProcess.close();
    await processes.stop();
    await model.close();
  }
}

/**
 * (l): the cost of rate limits and Idempotency-Key on the chat path. The same services behind
 * gateway processes built alike: the stack's, with the defaults (limiter on, default classes),
 * called with a fresh Idempotency-Key per request (BeginIdempotency + CompleteIdempotency) and
 * without one (limiter only), and two with RATE_LIMITS=off IDEMPOTENCY=off. Each round runs the sides in a fresh random order with a
 * pause between them (a fixed rotation always ran "limiter" right after "on", on the same gateway,
 * so the 50 ms batched debit of one landed on the other), each side in its own
 * session doing the same non-editing turn on the sample contract. Printed: the three p50s,
 * p50(on) - p50(off), and the median of the per-round differences on - off, which is the verdict:
 * on a shared 2-core machine the p50s drift with other processes' load by more than the 2 ms
 * being measured, while a round's requests see the same load. A second "off" gateway gives the
 * noise floor (off vs off), printed with the load average.
 */
async function benchLimiterOverhead(infra: Parameters<typeof startTestStack>[0]) {
  // The deployed shape (every service its own process, as `pnpm start`): in one process the
  // billing server's work for a background debit or record would run on the very event loop
  // that serves the measured request, which no deployment does.
  const dataDir = mkdtempSync(join(tmpdir(), "redline-bench-limits-"));
  chmodSync(dataDir, 0o755);
  const ports = await Promise.all(Array.from({ length: 8 }, () => freePort()));
  const addrs = {
    DOCUMENTS_ADDR: `127.0.0.1:${ports[0]}`,
    SESSIONS_ADDR: `127.0.0.1:${ports[1]}`,
    AGENT_ADDR: `127.0.0.1:${ports[2]}`,
    BILLING_ADDR: `127.0.0.1:${ports[3]}`,
    INGEST_ADDR: `127.0.0.1:${ports[4]}`,
  };
  const env = {
    ...process.env,
    ...addrs,
    ...infraEnv({ ...infra, databaseUrl: await createTestDatabase(infra.databaseUrl, "bench_limits") }),
    LOG_LEVEL: "warn",
  };
  // Its gateway has the defaults: limiter on, Idempotency-Key honoured.
  const processes = await startStack({ dataDir, env: { ...env, PORT: String(ports[5]) } });
  const children: ChildProcess[] = [];
  const gatewayProcess = async (port: number): Promise<string> => {
    const child = spawn(process.execPath, [...RUNTIME_ARGS.tsx, "services/gateway/src/main.ts"], {
      cwd: join(import.meta.dirname, ".."),
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...env, PORT: String(port), RATE_LIMITS: "off", IDEMPOTENCY: "off" },
    });
    children.push(child);
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 300; i++) {
      if (
        await fetch(`${url}/health`).then(
          () => true,
          () => false,
        )
      )
        return url;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error("a bench gateway did not start within 30 s");
  };
  try {
    // Two gateways with both features off: the second one's difference to the first is the noise floor.
    const [offUrl, off2Url] = await Promise.all([gatewayProcess(ports[6]), gatewayProcess(ports[7])]);
    const billing = createRpcClient(billingV1.BillingServiceService, addrs.BILLING_ADDR);
    const { apiKey: key } = await billing.createApiKey({ user: "bench-limits", organization: "", plan: "pro" });
    billing.close();
    const limitedUrl = processes.gatewayUrl;
    const sides = [
      { name: "on", call: caller(limitedUrl), times: [] as number[], session: "bench-limits-on", idem: true },
      { name: "limiter", call: caller(limitedUrl), times: [] as number[], session: "bench-limits-lim", idem: false },
      { name: "off", call: caller(offUrl), times: [] as number[], session: "bench-limits-off", idem: false },
      { name: "off2", call: caller(off2Url), times: [] as number[], session: "bench-limits-off2", idem: false },
    ];
    for (const side of sides) {
      const load = await side.call("POST", "/v1/chat", {
        key,
        body: { session_id: side.session, message: 'show section "5. Governing Law"', document_html: sampleContract() },
      });
      if (load.status !== 200) throw new Error(`chat failed: ${load.status} ${await load.text()}`);
    }
    const rounds = 300;
    const warmup = 20;
    // Per round, the sides one after the other: their differences cancel the machine's load drift.
    const paired: { on: number[]; limiter: number[]; floor: number[] } = { on: [], limiter: [], floor: [] };
    const random = seededRandom(0x11d);
    for (let i = 0; i < rounds + warmup; i++) {
      const round: Record<string, number> = {};
      for (const side of shuffled(sides, random)) {
        // Past the 50 ms debit batch of the side before.
        await new Promise((r) => setTimeout(r, 60));
        const started = performance.now();
        const res = await side.call("POST", "/v1/chat", {
          key,
          body: { session_id: side.session, message: 'show section "5. Governing Law"' },
          headers: side.idem ? { "Idempotency-Key": randomUUID() } : {},
        });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`chat (${side.name}) failed: ${res.status}`);
        if (!side.name.startsWith("off") && !res.headers.get("ratelimit")) throw new Error("the limiter did not run");
        round[side.name] = performance.now() - started;
      }
      if (i < warmup) continue;
      for (const side of sides) side.times.push(round[side.name]);
      paired.on.push(round.on - round.off);
      paired.limiter.push(round.limiter - round.off);
      paired.floor.push(round.off2 - round.off);
    }
    const [on, limiterOnly, offSide] = sides.map((s) => quantile(s.times, 0.5));
    const addedP50 = on - offSide;
    const addedPaired = quantile(paired.on, 0.5);
    results.push({
      name:
        `(l) sync chat over ${rounds} rounds: p50 limiter + Idempotency-Key ${on.toFixed(2)} ms, limiter only ${limiterOnly.toFixed(2)} ms, both off ${offSide.toFixed(2)} ms` +
        `\n      added: p50(on) - p50(off) ${addedP50.toFixed(2)} ms; median of per-round differences: on ${addedPaired.toFixed(2)} ms, limiter only ${quantile(paired.limiter, 0.5).toFixed(2)} ms (the verdict; robust to load from other processes); off vs off ${quantile(paired.floor, 0.5).toFixed(2)} ms (noise floor), load average ${loadavg()[0].toFixed(1)}`,
      value: `added ${addedPaired.toFixed(2)} ms`,
      target: "< 2 ms",
      pass: addedPaired < 2,
    });
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
    await processes.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** `pnpm bench [letters]`: run only the named benchmarks (e.g. `pnpm bench f`); all by default. */
const only = new Set(
  process.argv
    .slice(2)
    .join("")
    .replace(/[^a-z]/g, ""),
);
const wanted = (...letters: string[]) => only.size === 0 || letters.some((l) => only.has(l));

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), "redline-bench-"));
  // Embedded Postgres runs as the postgres user, which must be able to enter the directory.
  chmodSync(dataDir, 0o755);
  const infra = await startLocalInfra({ dataDir, persistent: false });
  try {
    if (wanted("j")) {
      const stack = await startTestStack(infra, { name: "bench-offline" });
      try {
        const chat = { stack, key: await stack.createKey("bench-j"), otherKey: await stack.createKey("bench-j-other") };
        await benchOfflineParse(results, chat);
      } finally {
        await stack.close();
      }
    }
    if (wanted("a", "c", "d", "e")) {
      const stack = await startTestStack(infra, { name: "bench" });
      try {
        const key = await stack.createKey("bench", { plan: "pro" });
        if (wanted("a")) await benchCommit(stack, stack.addrs.documents, key);
        if (wanted("c")) await benchSessions(stack, key);
        if (wanted("d")) await benchDocEvents(stack, key);
        if (wanted("e")) await benchSaves(stack, key);
      } finally {
        await stack.close();
      }
    }
    if (wanted("b")) await benchModelBytes(infra);
    if (wanted("f")) await benchAsyncOverhead(infra);
    if (wanted("g", "h", "i")) await benchIngest(results);
    if (wanted("k")) await benchIngestScaling(results);
    if (wanted("l")) await benchLimiterOverhead(infra);
    if (wanted("m")) await benchMetricsOverhead(results, infra);
    if (wanted("n")) await benchHealth(results, infra);
    if (wanted("o")) await benchObservabilityOverhead(results, infra);
    if (wanted("p")) await benchChatThroughput(results, infra);
    if (wanted("q")) await benchFaults(results);
    if (wanted("r")) await benchDocxInPlace(results);
  } finally {
    await infra.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  console.log("\nRedline benchmarks (ratios measured in this run)");
  for (const r of results) {
    const verdict = r.target
      ? ` target ${r.target}: ${r.pass ? "PASS" : r.name.startsWith("(l)") ? "FAIL" : "MISS"}`
      : "";
    console.log(`${r.name}\n    → ${r.value}${verdict}`);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
