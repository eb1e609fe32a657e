// `pnpm bench`: speed and size targets, each printed as a ratio against a baseline measured in
// the same run on this machine (never as absolute timings checked by tests).
//   (a) a one-chunk edit applied and committed on a document 10x larger vs 1x (target <= 1.5)
//   (b) bytes sent to the model in one turn on a 200-page document vs its size (target <= 5 %) (scripts/lib/bench-documents.ts)
//   (c) GET /v1/sessions through gateway + gRPC vs the same queries issued to Postgres
//   (d) doc-event visibility: a save in one session seen by 1 and by 50 polling sessions, p50 and p99
//   (e) human saves per second vs a plain Postgres transaction of the same rows (scripts/lib/bench-sessions.ts)
//   (f) async chat: POST /v1/chat/async to the first SSE event and to final, minus the model's latency (scripts/lib/bench-async.ts)
//   (g)-(i) ingest: docx → HTML vs pandoc, pdf → text vs pdftotext, HTML → pdf (scripts/lib/bench-ingest.ts)
//   (j) offline engine parse of adversarial messages, equal characters per size, 12.5k×8 vs 100k×1 (scripts/lib/bench-offline.ts)
//   (k) ingest scaling: txt export, html → docx export, HTML upload at 1-8 MB (scripts/lib/bench-scaling.ts)
//   (l) sync chat p50 with the rate limiter and Idempotency-Key on vs off, side by side (target: < 2 ms added) (scripts/lib/bench-limiter.ts)
//   (m) chat p50 with metrics on vs METRICS_ADDR=off, separate processes (target < 3 %) (scripts/lib/bench-metrics.ts)
//   (n) GET /health and GET /ready req/s vs an authenticated list (scripts/lib/bench-metrics.ts)
//   (o) tracing, and metrics + tracing, on vs off on the sync chat path, switched round by round in one process, with an off-vs-off noise floor and the collectors' idle CPU (target < 3 % of p50) (scripts/lib/bench-chat/observability.ts)
//   (p) sync chat turns/s, 8 clients on a small stored document, vs plain Postgres transactions of the same rows (scripts/lib/bench-chat/throughput.ts)
//   (q) faults: Postgres restarted, NATS down, S3 down, and kill -9 of each service, under the mixed
//       load vs no fault: longest client wait, failed requests by status, restart and recovery time
//       (scripts/lib/bench-faults.ts, packages/local-stack/src/faults/)
//   (r) docx edited in place: untouched paragraphs byte-identical after one edit (target 100 %), export
//       time beside the generated export and pandoc html → docx (scripts/lib/bench-docx-inplace.ts)
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalInfra } from "@redline/local-infra";
import { startTestStack } from "../test/support/stack.js";
import { benchAsyncOverhead } from "./lib/bench-async.js";
import { benchObservabilityOverhead } from "./lib/bench-chat/observability.js";
import { benchChatThroughput } from "./lib/bench-chat/throughput.js";
import { benchCommit, benchModelBytes } from "./lib/bench-documents.js";
import { benchDocxInPlace } from "./lib/bench-docx-inplace.js";
import { benchFaults } from "./lib/bench-faults.js";
import { type BenchResult, benchIngest } from "./lib/bench-ingest.js";
import { benchLimiterOverhead } from "./lib/bench-limiter.js";
import { benchHealth, benchMetricsOverhead } from "./lib/bench-metrics.js";
import { benchOfflineParse } from "./lib/bench-offline.js";
import { benchIngestScaling } from "./lib/bench-scaling.js";
import { benchDocEvents, benchSaves, benchSessions } from "./lib/bench-sessions.js";

const results: BenchResult[] = [];

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
        if (wanted("a")) await benchCommit(results, stack, stack.addrs.documents, key);
        if (wanted("c")) await benchSessions(results, stack, key);
        if (wanted("d")) await benchDocEvents(results, stack, key);
        if (wanted("e")) await benchSaves(results, stack, key);
      } finally {
        await stack.close();
      }
    }
    if (wanted("b")) await benchModelBytes(results, infra);
    if (wanted("f")) await benchAsyncOverhead(results, infra);
    if (wanted("g", "h", "i")) await benchIngest(results);
    if (wanted("k")) await benchIngestScaling(results);
    if (wanted("l")) await benchLimiterOverhead(results, infra);
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
