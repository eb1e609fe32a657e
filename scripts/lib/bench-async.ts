import { quantile, startProcessStack } from "@redline/local-stack";
import { readSse } from "../../test/support/jobs.js";
import { delayed, type ScriptedOpenAi, startScriptedOpenAi } from "../../test/support/scripted-openai.js";
import { startTestStack, type TestStack } from "../../test/support/stack.js";

import type { BenchResult } from "./bench-ingest.js";
import { generateDocument, scriptedEngine } from "./bench-support.js";

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
export async function benchAsyncOverhead(results: BenchResult[], infra: Parameters<typeof startTestStack>[0]) {
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
