import { documentsV1 } from "@redline/grpc-stubs";
import { WorkingDocument } from "@redline/html-chunks";
import { quantile } from "@redline/local-stack";
import { createRpcClient } from "@redline/service-kit";
import { lastToolResultJson, startScriptedOpenAi } from "../../test/support/scripted-openai.js";
import { startTestStack, type TestStack } from "../../test/support/stack.js";

import type { BenchResult } from "./bench-ingest.js";
import { generateDocument, principalOf, scriptedEngine } from "./bench-support.js";

/** (a): median time of replace + operations() + CommitOperations on a 1x and a 10x document. */
export async function benchCommit(results: BenchResult[], stack: TestStack, documentsAddr: string, key: string) {
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

/** (b): a scripted model turn on a 200-page document; bytes of every request body it received. */
export async function benchModelBytes(results: BenchResult[], infra: Parameters<typeof startTestStack>[0]) {
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
