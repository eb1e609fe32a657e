// `pnpm bench`: speed and size targets, each printed as a ratio against a baseline measured in
// the same run on this machine (never as absolute timings checked by tests).
//   (a) a one-chunk edit applied and committed on a document 10x larger vs 1x (target <= 1.5)
//   (b) bytes sent to the model in one turn on a 200-page document vs its size (target <= 5 %)
//   (c) GET /v1/sessions through gateway + gRPC vs the same queries issued to Postgres
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { documentsV1 } from "@redline/grpc-stubs";
import { WorkingDocument } from "@redline/html-chunks";
import { startLocalInfra } from "@redline/local-infra";
import { createRpcClient, type Principal } from "@redline/service-kit";
import { lastToolResultJson, startScriptedOpenAi } from "../test/support/scripted-openai.js";
import { startTestStack, type TestStack } from "../test/support/stack.js";

const results: { name: string; value: string; target?: string; pass?: boolean }[] = [];

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

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
      { html: generateDocument(sections), title: "", pageSetupJson: "", sessionId: "bench" },
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

/** (b): a scripted model turn on a 200-page document; bytes of every request body it received. */
async function benchModelBytes(infra: Parameters<typeof startTestStack>[0]) {
  const model = await startScriptedOpenAi();
  const stack = await startTestStack(infra, {
    name: "bench_llm",
    openai: {
      baseURL: model.url,
      apiKey: "bench",
      models: { core: "m", turbo: "m", pro: "m", max: "m" },
      requestTimeoutMs: 60_000,
      maxSteps: 12,
    },
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

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), "redline-bench-"));
  // Embedded Postgres runs as the postgres user, which must be able to enter the directory.
  chmodSync(dataDir, 0o755);
  const infra = await startLocalInfra({ dataDir, persistent: false });
  try {
    const stack = await startTestStack(infra, { name: "bench" });
    try {
      const key = await stack.createKey("bench", { plan: "pro" });
      await benchCommit(stack, stack.addrs.documents, key);
      await benchSessions(stack, key);
    } finally {
      await stack.close();
    }
    await benchModelBytes(infra);
  } finally {
    await infra.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  console.log("\nRedline benchmarks (ratios measured in this run)");
  for (const r of results) {
    const verdict = r.target ? ` target ${r.target}: ${r.pass ? "PASS" : "MISS"}` : "";
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
