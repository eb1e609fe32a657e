import { type ChunkRecord, WorkingDocument } from "@redline/html-chunks";
import { AiTimeoutError, UnavailableError } from "@redline/service-kit";
import { afterEach, describe, expect, it } from "vitest";
import {
  delayed,
  lastToolResult,
  lastToolResultJson,
  type RecordedRequest,
  type ScriptedOpenAi,
  startScriptedOpenAi,
} from "../../../../test/support/scripted-openai.js";
import { selectEngine } from "./index.js";
import { createOpenAiEngine, type OpenAiEngineConfig } from "./openai.js";
import { plainTurn, type TurnInput } from "./types.js";

const DOC_HTML = [
  '<h1 data-chunk-id="c_title">Acme Services Agreement</h1>',
  '<p data-chunk-id="c_intro">This agreement is between <strong>Acme Corp</strong> and the Client.</p>',
  '<h2 data-chunk-id="c_pricing" style="color: #1f3864">Pricing</h2>',
  '<table data-chunk-id="c_table" style="width: 100%"><tbody><tr><th>Plan</th><th>Price</th></tr><tr><td>Basic</td><td>$10</td></tr></tbody></table>',
  '<p data-chunk-id="c_vat" class="note" style="color: #555">Prices exclude <em>VAT</em>.</p>',
  '<h2 data-chunk-id="c_term">Term</h2>',
  '<p data-chunk-id="c_term_p">This agreement lasts twelve months.</p>',
].join("\n");

const MODELS = { core: "m-core", turbo: "m-turbo", pro: "m-pro", max: "m-max" };

let server: ScriptedOpenAi | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

function config(url: string, overrides: Partial<OpenAiEngineConfig> = {}): OpenAiEngineConfig {
  return {
    baseURL: url,
    apiKey: "sk-test",
    models: MODELS,
    requestTimeoutMs: 5_000,
    maxSteps: 8,
    maxRetries: 0,
    ...overrides,
  };
}

function turn(document: WorkingDocument, message: string, extra: Partial<TurnInput> = {}): TurnInput {
  return plainTurn(message, document, { documentTitle: "Acme Services Agreement", ...extra });
}

function call(name: string, args: Record<string, unknown> | string): { name: string; arguments: string } {
  return { name, arguments: typeof args === "string" ? args : JSON.stringify(args) };
}

/** The chunk id on the outline line whose preview contains `text`. */
function idFromOutline(request: RecordedRequest, text: string): string {
  const outline = lastToolResultJson<{ outline: string }>(request).outline;
  const line = outline.split("\n").find((entry) => entry.includes(text));
  if (!line) throw new Error(`no outline line contains ${text}`);
  return line.split(" ")[0];
}

/** What the engine should have counted: messages + tools of every request body, in UTF-8 bytes. */
function bodyBytes(requests: RecordedRequest[]): number {
  return requests.reduce(
    (sum, request) =>
      sum + Buffer.byteLength(JSON.stringify(request.messages)) + Buffer.byteLength(JSON.stringify(request.tools)),
    0,
  );
}

describe("OpenAI engine over HTTP", () => {
  it("runs a multi-step turn (outline → read → replace) and applies the edit", async () => {
    server = await startScriptedOpenAi([
      { toolCalls: [call("get_outline", {})] },
      (request) => ({ toolCalls: [call("read_chunks", { chunk_ids: [idFromOutline(request, "Prices exclude")] })] }),
      (request) => {
        const read = lastToolResultJson<{ chunks: { chunk_id: string; html: string }[] }>(request);
        const chunk = read.chunks[0];
        return {
          toolCalls: [
            call("replace_chunk", {
              chunk_id: chunk.chunk_id,
              html: chunk.html.replace("<em>VAT</em>", "<em>sales tax</em>"),
              explanation: "Renamed VAT to sales tax in the pricing note",
            }),
          ],
        };
      },
      { content: "I changed VAT to sales tax in the pricing note." },
    ]);
    const doc = WorkingDocument.fromHtml(DOC_HTML);
    const progress: string[] = [];
    const out = await createOpenAiEngine(config(server.url)).runTurn(
      turn(doc, "Call VAT sales tax", { onProgress: (text) => progress.push(text) }),
    );

    expect(out.reply).toBe("I changed VAT to sales tax in the pricing note.");
    expect(out.toolCalls).toBe(3);
    expect(doc.operations()).toEqual([
      {
        kind: "replace",
        chunkId: "c_vat",
        html: '<p data-chunk-id="c_vat" class="note" style="color: #555">Prices exclude <em>sales tax</em>.</p>',
        explanation: "Renamed VAT to sales tax in the pricing note",
      },
    ]);
    expect(progress).toEqual(["Reading the outline", "Reading 1 chunk", "Editing chunk c_vat"]);

    const [first, , , last] = server.requests;
    expect(server.requests).toHaveLength(4);
    expect(first).toMatchObject({ model: "m-core", stream: true, tool_choice: "auto" });
    expect(first.tools?.map((tool) => tool.function.name)).toEqual([
      "get_outline",
      "read_chunks",
      "search_text",
      "replace_chunk",
      "insert_after_chunk",
      "delete_chunk",
    ]);
    expect(server.requestHeaders[0].authorization).toBe("Bearer sk-test");
    // A small document's outline rides along in the system prompt.
    expect(first.messages[0].content).toContain("c_vat p: Prices exclude VAT.");
    expect(first.messages[0].content).toContain('Document title: "Acme Services Agreement"');
    expect(first.messages[1]).toEqual({ role: "user", content: "Call VAT sales tax" });
    // The final request carries the whole exchange: assistant tool calls answered by tool messages.
    expect(last.messages.map((message) => message.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
      "assistant",
      "tool",
      "assistant",
      "tool",
    ]);
    expect(JSON.parse(lastToolResult(last))).toEqual({ ok: true, chunk_id: "c_vat" });
    expect(out.bytesSentToModel).toBe(bodyBytes(server.requests));
  });

  it("reassembles tool-call arguments streamed in pieces", async () => {
    const html = '<p data-chunk-id="c_term_p">This agreement lasts <strong>twenty-four</strong> months.</p>';
    server = await startScriptedOpenAi([
      {
        toolCalls: [
          call("replace_chunk", { chunk_id: "c_term_p", html, explanation: "Extended the term to 24 months" }),
          call("insert_after_chunk", {
            after_chunk_id: "c_term_p",
            html: "<p>Renewal is automatic.</p>",
            explanation: "Added renewal",
          }),
        ],
        splitArgs: 9,
      },
      { content: "Extended the term." },
    ]);
    const doc = WorkingDocument.fromHtml(DOC_HTML);
    const out = await createOpenAiEngine(config(server.url)).runTurn(turn(doc, "Make it 24 months, renewing"));
    expect(out).toMatchObject({ reply: "Extended the term.", toolCalls: 2 });
    const ops = doc.operations();
    expect(ops[0]).toEqual({
      kind: "replace",
      chunkId: "c_term_p",
      html,
      explanation: "Extended the term to 24 months",
    });
    expect(ops[1]).toMatchObject({ kind: "insert", afterChunkId: "c_term_p", explanation: "Added renewal" });
    expect(ops[1].kind === "insert" && ops[1].html).toBe(
      `<p data-chunk-id="${ops[1].chunkId}">Renewal is automatic.</p>`,
    );
    // Both tool results are answered, in call order, under the streamed ids.
    const second = server.requests[1];
    const assistant = second.messages[2];
    expect(assistant.tool_calls?.map((toolCall) => toolCall.function.name)).toEqual([
      "replace_chunk",
      "insert_after_chunk",
    ]);
    expect(second.messages.slice(3).map((message) => message.tool_call_id)).toEqual(
      assistant.tool_calls?.map((toolCall) => toolCall.id),
    );
  });

  it("returns malformed JSON arguments to the model as a tool error, then applies the fixed call", async () => {
    let seenError = "";
    server = await startScriptedOpenAi([
      { toolCalls: [call("delete_chunk", '{"chunk_id": "c_term_p", explanation: oops')] },
      (request) => {
        seenError = lastToolResult(request);
        return {
          toolCalls: [call("delete_chunk", { chunk_id: "c_term_p", explanation: "Removed the term sentence" })],
        };
      },
      { content: "Deleted it." },
    ]);
    const doc = WorkingDocument.fromHtml(DOC_HTML);
    const out = await createOpenAiEngine(config(server.url)).runTurn(turn(doc, "Delete the term sentence"));
    expect(JSON.parse(seenError)).toEqual({ error: expect.stringContaining("arguments are not valid JSON") });
    expect(out).toMatchObject({ reply: "Deleted it.", toolCalls: 2 });
    expect(doc.operations()).toEqual([
      { kind: "delete", chunkId: "c_term_p", explanation: "Removed the term sentence" },
    ]);
  });

  it("answers unknown chunk ids, unknown tools and malformed HTML with tool errors and applies nothing", async () => {
    let results: string[] = [];
    server = await startScriptedOpenAi([
      {
        toolCalls: [
          call("replace_chunk", { chunk_id: "c_missing", html: "<p>x</p>", explanation: "x" }),
          call("read_chunks", { chunk_ids: ["c_nope"] }),
          call("rewrite_everything", {}),
          call("replace_chunk", { chunk_id: "c_vat", html: "<p>Prices <b>exclude VAT.</p>", explanation: "x" }),
          call("replace_chunk", { chunk_id: "c_vat", html: "<p>one</p><p>two</p>", explanation: "x" }),
          call("insert_after_chunk", { after_chunk_id: "c_gone", html: "<p>x</p>", explanation: "x" }),
          call("read_chunks", { chunk_ids: "c_vat" }),
        ],
      },
      (request) => {
        results = request.messages
          .filter((message) => message.role === "tool")
          .map((message) => String(message.content));
        return { content: "I could not find those chunks." };
      },
    ]);
    const doc = WorkingDocument.fromHtml(DOC_HTML);
    const out = await createOpenAiEngine(config(server.url)).runTurn(turn(doc, "Edit things"));
    expect(out.reply).toBe("I could not find those chunks.");
    expect(out.toolCalls).toBe(7);
    expect(doc.operations()).toEqual([]);
    expect(doc.toHtml()).toBe(WorkingDocument.fromHtml(DOC_HTML).toHtml());
    const errors = results.map((result) => (JSON.parse(result) as { error?: string }).error ?? "");
    expect(errors[0]).toBe('unknown chunk "c_missing"');
    expect(errors[1]).toContain("no such chunk id: c_nope");
    expect(errors[2]).toContain('unknown tool "rewrite_everything"');
    expect(errors[3]).toContain("malformed HTML");
    expect(errors[4]).toContain("expected one block element");
    expect(errors[5]).toBe('unknown chunk "c_gone"');
    expect(errors[6]).toContain('"chunk_ids" must be a non-empty array');
  });

  it("rejects with UnavailableError when a stream stalls past requestTimeoutMs", async () => {
    server = await startScriptedOpenAi([delayed(20_000, { content: "too late" })]);
    const started = Date.now();
    const promise = createOpenAiEngine(config(server.url, { requestTimeoutMs: 300 })).runTurn(
      turn(WorkingDocument.fromHtml(DOC_HTML), "hi"),
    );
    await expect(promise).rejects.toBeInstanceOf(UnavailableError);
    await expect(promise).rejects.toThrow("no complete response within 300 ms");
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("rejects with UnavailableError when the headers never come within requestTimeoutMs", async () => {
    server = await startScriptedOpenAi([delayed(20_000, { content: "too late" }, { beforeHeaders: true })]);
    const started = Date.now();
    const promise = createOpenAiEngine(config(server.url, { requestTimeoutMs: 300, maxRetries: 1 })).runTurn(
      turn(WorkingDocument.fromHtml(DOC_HTML), "hi"),
    );
    await expect(promise).rejects.toBeInstanceOf(UnavailableError);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("rejects with the signal's reason, promptly, when the wall-clock cap fires mid-turn", async () => {
    server = await startScriptedOpenAi([
      { toolCalls: [call("get_outline", {})] },
      delayed(20_000, { content: "too late" }),
    ]);
    const controller = new AbortController();
    const cap = new AiTimeoutError();
    const doc = WorkingDocument.fromHtml(DOC_HTML);
    const promise = createOpenAiEngine(config(server.url, { requestTimeoutMs: 60_000 })).runTurn(
      turn(doc, "hi", { signal: controller.signal }),
    );
    setTimeout(() => controller.abort(cap), 300);
    const started = Date.now();
    await expect(promise).rejects.toBe(cap);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(server.requests).toHaveLength(2);
  });

  it("maps a provider 500 (after the SDK's retry) and a 4xx to UnavailableError", async () => {
    server = await startScriptedOpenAi([
      { status: 500, headers: { "retry-after-ms": "1" } },
      { status: 502, headers: { "retry-after-ms": "1" } },
    ]);
    const engine = createOpenAiEngine(config(server.url, { maxRetries: 1 }));
    const failed = engine.runTurn(turn(WorkingDocument.fromHtml(DOC_HTML), "hi"));
    await expect(failed).rejects.toBeInstanceOf(UnavailableError);
    await expect(failed).rejects.toThrow(/^model provider unavailable: 502/);
    expect(server.requests).toHaveLength(2);

    server.push({
      status: 401,
      body: '{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}',
    });
    const rejected = engine.runTurn(turn(WorkingDocument.fromHtml(DOC_HTML), "hi"));
    await expect(rejected).rejects.toBeInstanceOf(UnavailableError);
    await expect(rejected).rejects.toThrow("model provider unavailable: 401 Incorrect API key provided");
    expect(server.requests).toHaveLength(3);
  });

  it("maps a refused connection to UnavailableError", async () => {
    const closed = await startScriptedOpenAi();
    const url = closed.url;
    await closed.close();
    const promise = createOpenAiEngine(config(url)).runTurn(turn(WorkingDocument.fromHtml(DOC_HTML), "hi"));
    await expect(promise).rejects.toBeInstanceOf(UnavailableError);
    await expect(promise).rejects.toThrow(/^model provider unavailable: /);
  });

  it("never sends a large document whole: a turn that lists sections and reads 2 chunks of ~2 MB costs < 5 %", async () => {
    const { chunks, bytes } = largeDocument();
    expect(bytes).toBeGreaterThan(1_900_000);
    const doc = new WorkingDocument(chunks);
    const needle = "clause 57-3 on data retention";
    // What a model does on a big document: the section list, a search, then a 2-chunk read.
    server = await startScriptedOpenAi([
      { toolCalls: [call("get_outline", { headings_only: true })] },
      { toolCalls: [call("search_text", { query: needle })] },
      (request) => {
        const hit = lastToolResultJson<{ matches: { chunk_id: string }[] }>(request).matches[0].chunk_id;
        const next = chunks[chunks.findIndex((chunk) => chunk.chunkId === hit) + 1].chunkId;
        return { toolCalls: [call("read_chunks", { chunk_ids: [hit, next] })] };
      },
      (request) => {
        const read = lastToolResultJson<{ chunks: { chunk_id: string; html: string }[] }>(request).chunks;
        return {
          toolCalls: [
            call("replace_chunk", {
              chunk_id: read[0].chunk_id,
              html: read[0].html.replace("data retention", "data deletion"),
              explanation: "Renamed retention to deletion",
            }),
          ],
        };
      },
      { content: "Updated clause 57-3." },
    ]);
    const out = await createOpenAiEngine(config(server.url)).runTurn(turn(doc, `Rename ${needle} to deletion`));
    expect(out.reply).toBe("Updated clause 57-3.");
    expect(doc.operations()).toHaveLength(1);
    expect(doc.operations()[0]).toMatchObject({ kind: "replace", chunkId: "c_p57_3" });
    const ratio = out.bytesSentToModel / bytes;
    console.info(
      `large document: ${bytes} bytes, ${chunks.length} chunks; bytesSentToModel ${out.bytesSentToModel} (${(ratio * 100).toFixed(2)} %) over ${server.requests.length} requests`,
    );
    expect(ratio).toBeLessThan(0.05);
    expect(out.bytesSentToModel).toBe(bodyBytes(server.requests));
    const system = String(server.requests[0].messages[0].content);
    expect(system).toContain(`Chunks: ${chunks.length}`);
    expect(system).toContain("get_outline");
    expect(Buffer.byteLength(system)).toBeLessThan(4_000);
  });

  it("pages the outline of a large document and lists every chunk", async () => {
    const { chunks } = largeDocument();
    const doc = new WorkingDocument(chunks);
    const pages: { outline: string; next_from_chunk_id?: string }[] = [];
    const nextPage = (request: RecordedRequest) => {
      const page = lastToolResultJson<{ outline: string; next_from_chunk_id?: string }>(request);
      pages.push(page);
      return page.next_from_chunk_id
        ? { toolCalls: [call("get_outline", { from_chunk_id: page.next_from_chunk_id })] }
        : { content: "read it all" };
    };
    server = await startScriptedOpenAi([{ toolCalls: [call("get_outline", { headings_only: true })] }]);
    for (let i = 0; i < 40; i++) server.push(i === 0 ? () => ({ toolCalls: [call("get_outline", {})] }) : nextPage);
    const out = await createOpenAiEngine(config(server.url, { maxSteps: 40 })).runTurn(turn(doc, "read everything"));
    expect(out.reply).toBe("read it all");
    const headings = lastToolResultJson<{ outline: string }>(server.requests[1]).outline.split("\n");
    expect(headings[0]).toBe("c_h1 ## Chapter 1: Operations (13 chunks)");
    expect(headings).toHaveLength(200);
    const listed = pages.flatMap((page) => page.outline.split("\n").map((line) => line.split(" ")[0]));
    expect(listed).toEqual(chunks.map((chunk) => chunk.chunkId));
    for (const page of pages) expect(Buffer.byteLength(page.outline)).toBeLessThanOrEqual(24_000);
  });

  it("caps read_chunks at about 20 KB per call and says what was left out", async () => {
    const { chunks } = largeDocument();
    const doc = new WorkingDocument(chunks);
    const ids = chunks.slice(0, 40).map((chunk) => chunk.chunkId);
    server = await startScriptedOpenAi([{ toolCalls: [call("read_chunks", { chunk_ids: ids })] }]);
    await createOpenAiEngine(config(server.url)).runTurn(turn(doc, "read"));
    const result = lastToolResultJson<{ chunks: { chunk_id: string; html: string }[]; truncated: string }>(
      server.requests[1],
    );
    const returned = result.chunks.reduce((sum, chunk) => sum + Buffer.byteLength(chunk.html), 0);
    expect(returned).toBeLessThanOrEqual(20_000);
    expect(result.chunks.map((chunk) => chunk.chunk_id)).toEqual(ids.slice(0, result.chunks.length));
    expect(result.truncated).toContain(`not returned: ${ids.slice(result.chunks.length).join(", ")}`);
  });

  it("sends images as image_url parts and puts history, cursor and memory in the prompt", async () => {
    server = await startScriptedOpenAi([{ content: "It is a chart." }]);
    const out = await createOpenAiEngine(config(server.url)).runTurn(
      turn(WorkingDocument.fromHtml(DOC_HTML), "What is in this picture?", {
        images: [
          { name: "chart.png", mimeType: "image/png", base64Data: "iVBORw0KGgo=" },
          { name: "photo.jpg", mimeType: "image/jpeg", base64Data: "/9j/4AAQ" },
        ],
        history: [
          { sender: "user", content: "Hello" },
          { sender: "ai", content: "Hi, how can I help?" },
        ],
        cursor: { chunkId: "c_vat", selectedText: "exclude VAT" },
        memoryNote: "Prefers British spelling.",
      }),
    );
    expect(out).toEqual({ reply: "It is a chart.", toolCalls: 0, bytesSentToModel: bodyBytes(server.requests) });
    const [request] = server.requests;
    expect(request.messages.slice(1)).toEqual([
      { role: "user", content: "Hello" },
      { role: "assistant", content: "Hi, how can I help?" },
      {
        role: "user",
        content: [
          { type: "text", text: "What is in this picture?" },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
          { type: "image_url", image_url: { url: "data:image/jpeg;base64,/9j/4AAQ" } },
        ],
      },
    ]);
    const system = String(request.messages[0].content);
    expect(system).toContain('The user\'s cursor is in chunk c_vat, with this text selected: "exclude VAT"');
    expect(system).toContain("Prefers British spelling.");
  });

  it("uses the model of the requested tier", async () => {
    server = await startScriptedOpenAi();
    const engine = createOpenAiEngine(config(server.url));
    for (const modelTier of ["core", "turbo", "pro", "max"] as const) {
      await engine.runTurn(turn(WorkingDocument.fromHtml(DOC_HTML), "hi", { modelTier }));
    }
    expect(server.requests.map((request) => request.model)).toEqual(["m-core", "m-turbo", "m-pro", "m-max"]);
  });

  it("stops at maxSteps (scaled by thinking depth) and says so, keeping the edits", async () => {
    const outlineForever = () => ({ toolCalls: [call("get_outline", {})] });
    server = await startScriptedOpenAi(Array(10).fill(outlineForever));
    server.push(...Array(10).fill(outlineForever));
    const doc = WorkingDocument.fromHtml(DOC_HTML);
    const engine = createOpenAiEngine(config(server.url, { maxSteps: 4 }));
    const fast = await engine.runTurn(turn(doc, "loop", { thinkingDepth: "fast" }));
    expect(fast.reply).toBe("I stopped after 2 steps before finishing. Ask me to continue if more is needed.");
    expect(server.requests).toHaveLength(2);
    const deep = await engine.runTurn(turn(doc, "loop", { thinkingDepth: "deep" }));
    expect(deep.toolCalls).toBe(6);
    expect(server.requests).toHaveLength(8);
    expect(String(server.requests[2].messages[0].content)).toContain("Work carefully");
  });

  it("writes into an empty document from the start", async () => {
    server = await startScriptedOpenAi([
      {
        toolCalls: [
          call("insert_after_chunk", {
            after_chunk_id: null,
            html: "<h1>Plan</h1><p>First draft.</p>",
            explanation: "Drafted the plan",
          }),
        ],
      },
      { content: "Drafted." },
    ]);
    const doc = new WorkingDocument([]);
    await createOpenAiEngine(config(server.url)).runTurn(turn(doc, "Draft a plan"));
    expect(String(server.requests[0].messages[0].content)).toContain("The document is empty");
    expect(doc.outline().map((entry) => [entry.tag, entry.preview])).toEqual([
      ["h1", "Plan"],
      ["p", "First draft."],
    ]);
    expect(JSON.parse(lastToolResult(server.requests[1]))).toEqual({
      ok: true,
      inserted_chunk_ids: doc.chunks().map((chunk) => chunk.chunkId),
    });
  });
});

describe("selectEngine", () => {
  it("picks OpenAI when configured, else offline", () => {
    expect(selectEngine({}).name).toBe("offline");
    expect(selectEngine({ openai: config("http://127.0.0.1:9/v1") }).name).toBe("openai");
  });
});

/**
 * ~200 pages of a contract (~2 MB): per chapter an h2, 12 clause paragraphs of ~800
 * bytes and a small table. Ids are readable (`c_p57_3` = chapter 57, clause 3).
 */
function largeDocument(): { chunks: ChunkRecord[]; bytes: number } {
  const topics = ["Operations", "Security", "Billing", "Support", "Compliance"];
  const chunks: ChunkRecord[] = [];
  for (let chapter = 1; chapter <= 200; chapter++) {
    const topic = topics[(chapter - 1) % topics.length];
    chunks.push({
      chunkId: `c_h${chapter}`,
      html: `<h2 data-chunk-id="c_h${chapter}">Chapter ${chapter}: ${topic}</h2>`,
    });
    for (let clause = 1; clause <= 11; clause++) {
      const subject = chapter === 57 && clause === 3 ? "data retention" : `${topic.toLowerCase()} duties`;
      const sentence = `The Provider shall perform its ${topic.toLowerCase()} obligations with due care and report any deviation within five business days. `;
      chunks.push({
        chunkId: `c_p${chapter}_${clause}`,
        html: `<p data-chunk-id="c_p${chapter}_${clause}" style="text-align: justify">This is clause ${chapter}-${clause} on ${subject}. ${sentence.repeat(7)}</p>`,
      });
    }
    chunks.push({
      chunkId: `c_t${chapter}`,
      html: `<table data-chunk-id="c_t${chapter}"><tbody><tr><th>Metric</th><th>Target</th></tr><tr><td>${topic} response</td><td>${chapter} hours</td></tr></tbody></table>`,
    });
  }
  const bytes = chunks.reduce((sum, chunk) => sum + Buffer.byteLength(chunk.html) + 1, 0);
  return { chunks, bytes };
}
