// Real OpenAI-compatible servers' quirks, each reproduced by the scripted server over real HTTP
// and run through the engine: text tool calls, broken arguments, parallel calls, no tool support,
// no streaming, answers cut off mid-call, small context windows, Retry-After.
import { WorkingDocument } from "@redline/html-chunks";
import { AiTimeoutError, UnavailableError } from "@redline/service-kit";
import { afterEach, describe, expect, it } from "vitest";
import {
  lastToolResult,
  type RecordedRequest,
  type ScriptedOpenAi,
  type ScriptStep,
  startScriptedOpenAi,
} from "../../../../test/support/scripted-openai.js";
import { createOpenAiEngine, type OpenAiEngineConfig } from "./openai.js";
import { plainTurn, type TurnInput } from "./types.js";

const DOC_HTML = [
  '<h1 data-chunk-id="c_title">Acme Services Agreement</h1>',
  '<p data-chunk-id="c_intro">This agreement is between Acme Corp and the Client.</p>',
  '<p data-chunk-id="c_vat">Prices exclude VAT.</p>',
  '<h2 data-chunk-id="c_term">Term</h2>',
  '<p data-chunk-id="c_term_p">This agreement lasts twelve months.</p>',
].join("\n");

let server: ScriptedOpenAi | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function config(url: string, overrides: Partial<OpenAiEngineConfig> = {}): OpenAiEngineConfig {
  const model = "quirky";
  return {
    baseURL: url,
    apiKey: "sk-test",
    models: { core: model, turbo: model, pro: model, max: model },
    requestTimeoutMs: 5_000,
    maxSteps: 8,
    maxRetries: 0,
    ...overrides,
  };
}

const doc = () => WorkingDocument.fromHtml(DOC_HTML);
const turn = (document: WorkingDocument, message: string, extra: Partial<TurnInput> = {}) =>
  plainTurn(message, document, extra);
const json = (value: unknown) => JSON.stringify(value);
const DELETE_TERM = { chunk_id: "c_term_p", explanation: "Removed the term" };

async function run(script: Parameters<typeof startScriptedOpenAi>[0], overrides: Partial<OpenAiEngineConfig> = {}) {
  server = await startScriptedOpenAi(script);
  const document = doc();
  const out = await createOpenAiEngine(config(server.url, overrides)).runTurn(turn(document, "Edit it"));
  return { out, document, requests: server.requests };
}

describe("tool calls sent as text in content", () => {
  it("runs Hermes/Qwen <tool_call> blocks and answers them as native calls", async () => {
    const { out, document, requests } = await run([
      { content: `Deleting it.\n<tool_call>\n${json({ name: "delete_chunk", arguments: DELETE_TERM })}\n</tool_call>` },
      { content: "Deleted the term sentence." },
    ]);
    expect(out).toMatchObject({ reply: "Deleted the term sentence.", toolCalls: 1 });
    expect(document.operations()).toEqual([{ kind: "delete", chunkId: "c_term_p", explanation: "Removed the term" }]);
    const [assistant, tool] = requests[1].messages.slice(-2);
    expect(assistant).toMatchObject({ role: "assistant", content: "Deleting it.", tool_calls: [{ type: "function" }] });
    expect(assistant.tool_calls?.[0].function.name).toBe("delete_chunk");
    expect(tool).toMatchObject({ role: "tool", tool_call_id: assistant.tool_calls?.[0].id });
  });

  it("runs Mistral [TOOL_CALLS] and a bare JSON array of calls", async () => {
    const { document } = await run([
      { content: `[TOOL_CALLS][${json({ name: "delete_chunk", arguments: DELETE_TERM })}]` },
      {
        content: json([
          {
            name: "replace_chunk",
            arguments: { chunk_id: "c_vat", html: "<p>Prices include VAT.</p>", explanation: "VAT" },
          },
        ]),
      },
      { content: "Done both." },
    ]);
    // Operations list in document order: c_vat comes before c_term_p.
    expect(document.operations().map((op) => [op.kind, op.chunkId])).toEqual([
      ["replace", "c_vat"],
      ["delete", "c_term_p"],
    ]);
  });

  it("takes text naming an unknown tool as the reply and applies nothing", async () => {
    const text = `<tool_call>${json({ name: "format_disk", arguments: {} })}</tool_call>`;
    const { out, document, requests } = await run([{ content: text }]);
    expect(out.reply).toBe(text);
    expect(document.operations()).toEqual([]);
    expect(requests).toHaveLength(1);
  });
});

describe("arguments that are not valid JSON", () => {
  it("repairs trailing commas, single quotes, a fence and an unclosed object once", async () => {
    const { document, requests } = await run([
      {
        toolCalls: [
          {
            name: "replace_chunk",
            arguments: "{'chunk_id': 'c_vat', 'html': '<p>Prices include VAT.</p>', 'explanation': 'VAT',}",
          },
          { name: "delete_chunk", arguments: '```json\n{"chunk_id": "c_term_p", "explanation": "gone"' },
        ],
      },
      { content: "Done." },
    ]);
    expect(document.operations().map((op) => op.kind)).toEqual(["replace", "delete"]);
    const results = requests[1].messages.filter((m) => m.role === "tool").map((m) => JSON.parse(String(m.content)));
    expect(results).toEqual([
      { ok: true, chunk_id: "c_vat" },
      { ok: true, deleted_chunk_id: "c_term_p" },
    ]);
  });

  it("answers unrepairable arguments with a tool error naming the problem; the loop goes on", async () => {
    let error = "";
    const { out, document } = await run([
      { toolCalls: [{ name: "delete_chunk", arguments: '{"chunk_id": c_term_p}' }] },
      (request: RecordedRequest) => {
        error = lastToolResult(request);
        return { toolCalls: [{ name: "delete_chunk", arguments: json(DELETE_TERM) }] };
      },
      { content: "Fixed and deleted." },
    ]);
    expect(JSON.parse(error).error).toMatch(/^arguments are not valid JSON \(.*\); send one JSON object/);
    expect(out.reply).toBe("Fixed and deleted.");
    expect(document.operations()).toHaveLength(1);
  });
});

describe("parallel tool calls", () => {
  const calls = [
    {
      name: "replace_chunk",
      arguments: json({ chunk_id: "c_vat", html: "<p>Prices include VAT.</p>", explanation: "a" }),
    },
    {
      name: "replace_chunk",
      arguments: json({ chunk_id: "c_intro", html: "<p>Between Acme and you.</p>", explanation: "b" }),
    },
    { name: "delete_chunk", arguments: json(DELETE_TERM) },
  ];

  it("reassembles interleaved argument fragments by index and runs every call in order", async () => {
    const { out, document, requests } = await run([
      { toolCalls: calls, splitArgs: 5, interleave: true },
      { content: "ok" },
    ]);
    expect(out.toolCalls).toBe(3);
    expect(document.operations().map((op) => [op.kind, op.chunkId])).toEqual([
      ["replace", "c_intro"],
      ["replace", "c_vat"],
      ["delete", "c_term_p"],
    ]);
    // One result per call, in the order of the calls, each answering its call's id.
    const assistant = requests[1].messages.find((m) => m.role === "assistant");
    const results = requests[1].messages.filter((m) => m.role === "tool");
    expect(results.map((m) => m.tool_call_id)).toEqual(assistant?.tool_calls?.map((c) => c.id));
    expect(results.map((m) => JSON.parse(String(m.content)))).toEqual([
      { ok: true, chunk_id: "c_vat" },
      { ok: true, chunk_id: "c_intro" },
      { ok: true, deleted_chunk_id: "c_term_p" },
    ]);
  });

  it("tells calls apart by id when the server numbers them all index 0", async () => {
    const { document } = await run([{ toolCalls: calls, splitArgs: 3, zeroIndex: true }, { content: "ok" }]);
    expect(document.operations()).toHaveLength(3);
  });
});

describe("a server without tool support", () => {
  const noTools = (request: RecordedRequest) =>
    request.tools
      ? {
          status: 400,
          body: json({ error: { message: "registry.ollama.ai/library/gemma:2b does not support tools" } }),
        }
      : null;

  /** A server that answers `answers` in turn, rejecting (without using one up) what `reject` refuses. */
  const serverLike = (answers: string[], reject: (request: RecordedRequest) => ScriptStep | null) => {
    const queue = [...answers];
    const step = (request: RecordedRequest): ScriptStep => reject(request) ?? { content: queue.shift() ?? "done" };
    return Array.from({ length: 10 }, () => step);
  };

  it("falls back to structured output (json_schema, then json_object) and remembers it per model", async () => {
    const noJsonSchema = (request: RecordedRequest) =>
      noTools(request) ??
      ((request.response_format as { type?: string } | undefined)?.type === "json_schema"
        ? { status: 400, body: json({ error: { message: "json_schema response_format is not supported" } }) }
        : null);
    server = await startScriptedOpenAi(
      serverLike(
        [
          json({ tool_calls: [{ name: "delete_chunk", arguments: DELETE_TERM }], reply: "" }),
          json({ tool_calls: [], reply: "Deleted it." }),
          json({ tool_calls: [], reply: "Nothing to do." }),
        ],
        noJsonSchema,
      ),
    );
    const engine = createOpenAiEngine(
      config(server.url, { models: { core: "no-tools", turbo: "t", pro: "p", max: "m" } }),
    );
    const document = doc();
    const out = await engine.runTurn(turn(document, "Delete the term"));
    expect(out.reply).toBe("Deleted it.");
    expect(document.operations()).toEqual([{ kind: "delete", chunkId: "c_term_p", explanation: "Removed the term" }]);
    const requests = server.requests;
    const format = (r: RecordedRequest) => (r.response_format as { type?: string } | undefined)?.type;
    expect(requests.map((r) => [r.tools !== undefined, format(r)])).toEqual([
      [true, undefined],
      [false, "json_schema"],
      [false, "json_object"],
      [false, "json_object"],
    ]);
    const schema = (requests[1].response_format as { json_schema: { schema: { required: string[] } } }).json_schema;
    expect(schema.schema.required).toEqual(["tool_calls", "reply"]);
    // Tool results go back as a user message, and the system prompt describes the tools.
    expect(requests[3].messages.some((m) => m.role === "tool")).toBe(false);
    expect(String(requests[3].messages.at(-1)?.content)).toContain("Tool results:");
    expect(String(requests[3].messages[0].content)).toContain('"name":"delete_chunk"');

    // The next turn on the same server and model starts in the fallback that worked.
    const again = await engine.runTurn(turn(doc(), "Anything?"));
    expect(again.reply).toBe("Nothing to do.");
    expect(requests).toHaveLength(5);
    expect([requests[4].tools, format(requests[4])]).toEqual([undefined, "json_object"]);
  });

  it("uses plain instructions when no response_format is accepted, and OPENAI_TOOL_MODE=structured from the start", async () => {
    const noFormats = (request: RecordedRequest) =>
      request.tools || request.response_format
        ? { status: 400, body: json({ error: { message: "unknown field response_format" } }) }
        : null;
    const { out, document, requests } = await run(
      serverLike(
        [
          `\`\`\`json\n${json({ tool_calls: [{ name: "delete_chunk", arguments: DELETE_TERM }], reply: "" })}\n\`\`\``,
          "Deleted.",
        ],
        noFormats,
      ),
      { toolMode: "structured" },
    );
    expect(requests.map((r) => [r.tools, (r.response_format as { type?: string } | undefined)?.type])).toEqual([
      [undefined, "json_schema"],
      [undefined, "json_object"],
      [undefined, undefined],
      [undefined, undefined],
    ]);
    expect(String(requests[2].messages[0].content)).toContain("answering with exactly one JSON object");
    expect(document.operations()).toHaveLength(1);
    // Plain text in the fallback is the reply.
    expect(out.reply).toBe("Deleted.");
  });
});

describe("no streaming", () => {
  it("reads one JSON body sent to a streamed request, then stops asking for a stream", async () => {
    const { out, document, requests } = await run([
      { toolCalls: [{ name: "delete_chunk", arguments: json(DELETE_TERM) }], ignoreStream: true },
      { content: "Deleted.", ignoreStream: true },
    ]);
    expect(out.reply).toBe("Deleted.");
    expect(document.operations()).toHaveLength(1);
    expect(requests.map((r) => r.stream)).toEqual([true, false]);
  });

  it("sends the request again without stream when the server rejects it", async () => {
    const { out, requests } = await run([
      { status: 400, body: json({ error: { message: "stream is not supported for this model" } }) },
      { content: "Hello." },
    ]);
    expect(out.reply).toBe("Hello.");
    expect(requests.map((r) => r.stream)).toEqual([true, false]);
  });
});

describe('finish_reason "length" in the middle of a tool call', () => {
  const cut = '{"chunk_id": "c_vat", "html": "<p>Prices include V';

  it("applies nothing of the cut call and asks once more with a note to be shorter", async () => {
    const { out, document, requests } = await run([
      { toolCalls: [{ name: "replace_chunk", arguments: cut }], finishReason: "length" },
      {
        toolCalls: [
          {
            name: "replace_chunk",
            arguments: json({ chunk_id: "c_vat", html: "<p>VAT included.</p>", explanation: "x" }),
          },
        ],
      },
      { content: "Done." },
    ]);
    expect(out.reply).toBe("Done.");
    expect(document.operations()).toEqual([
      { kind: "replace", chunkId: "c_vat", html: '<p data-chunk-id="c_vat">VAT included.</p>', explanation: "x" },
    ]);
    expect(requests[1].messages.at(-1)).toMatchObject({ role: "user" });
    expect(String(requests[1].messages.at(-1)?.content)).toContain("cut off at the output token limit");
    expect(requests[1].messages.some((m) => m.role === "tool")).toBe(false);
  });

  it("stops after a second cut-off, saying so, with the document unchanged (also for a cut text call)", async () => {
    const { out, document, requests } = await run([
      { toolCalls: [{ name: "replace_chunk", arguments: cut }], finishReason: "length" },
      { content: `<tool_call>{"name": "replace_chunk", "arguments": ${cut}`, finishReason: "length" },
    ]);
    expect(out.reply).toContain("cut off at its output limit twice");
    expect(document.operations()).toEqual([]);
    expect(requests).toHaveLength(2);
  });
});

describe("a context window smaller than the prompt", () => {
  const big = `<p data-chunk-id="c_big">${"Long clause text. ".repeat(2000)}</p>`;

  it("reads OPENAI_CONTEXT_TOKENS: reads and history are cut to fit", async () => {
    server = await startScriptedOpenAi([
      { toolCalls: [{ name: "read_chunks", arguments: json({ chunk_ids: ["c_big", "c_vat"] }) }] },
    ]);
    const document = WorkingDocument.fromHtml(`${DOC_HTML}\n${big}`);
    const history = Array.from({ length: 30 }, (_, i) => ({
      sender: i % 2 ? ("ai" as const) : ("user" as const),
      content: `turn ${i} ${"x".repeat(300)}`,
    }));
    await createOpenAiEngine(config(server.url, { contextTokens: 4096 })).runTurn(turn(document, "Read", { history }));
    const [first, second] = server.requests;
    expect(Buffer.byteLength(JSON.stringify(first.messages))).toBeLessThan(4096 * 3);
    const read = JSON.parse(lastToolResult(second)) as { chunks: { html: string; warning?: string }[] };
    expect(Buffer.byteLength(read.chunks[0].html)).toBeLessThan(2_500);
    expect(read.chunks[0].warning).toContain("do not replace this chunk");
    // Without the setting, the same read returns 20 times more.
    server.push({ toolCalls: [{ name: "read_chunks", arguments: json({ chunk_ids: ["c_big"] }) }] });
    await createOpenAiEngine(config(server.url)).runTurn(turn(document, "Read", { history }));
    const wide = JSON.parse(lastToolResult(server.requests.at(-1) as RecordedRequest)) as {
      chunks: { html: string }[];
    };
    expect(Buffer.byteLength(wide.chunks[0].html)).toBeGreaterThan(30_000);
  });

  it("shrinks and retries once on a provider 400 saying the context length was exceeded", async () => {
    const tooLong = {
      status: 400,
      body: json({
        error: {
          message: "This model's maximum context length is 4096 tokens. However, you requested 9000 tokens",
          code: "context_length_exceeded",
        },
      }),
    };
    const history = [
      { sender: "user" as const, content: "earlier question" },
      { sender: "ai" as const, content: "earlier answer" },
    ];
    server = await startScriptedOpenAi([tooLong, { content: "Short answer." }]);
    const engine = createOpenAiEngine(config(server.url));
    const out = await engine.runTurn(turn(doc(), "Question", { history }));
    expect(out.reply).toBe("Short answer.");
    const [first, second] = server.requests;
    expect(first.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(second.messages.map((m) => m.role)).toEqual(["system", "user"]);

    server.push(tooLong, tooLong);
    const failed = engine.runTurn(turn(doc(), "Question", { history }));
    await expect(failed).rejects.toBeInstanceOf(UnavailableError);
    await expect(failed).rejects.toThrow(/does not fit the model's context window even shrunk.*OPENAI_CONTEXT_TOKENS/);
  });
});

describe("429/503 with Retry-After", () => {
  it("waits as told (seconds, then an HTTP date) and then succeeds", async () => {
    const date = new Date(Date.now() + 2_000).toUTCString();
    const until = Date.parse(date);
    const { out, requests } = await run([
      { status: 429, headers: { "retry-after": "1" } },
      { status: 503, headers: { "retry-after": date } },
      { content: "Finally." },
    ]);
    expect(out.reply).toBe("Finally.");
    expect(requests).toHaveLength(3);
    const times = (server as ScriptedOpenAi).requestTimes;
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(950);
    // The second wait lasts until the date (which has one-second resolution).
    expect(times[2]).toBeGreaterThanOrEqual(until - 20);
  });

  it("fails at once with a clear error when asked to wait longer than the cap, and after 5 retries", async () => {
    server = await startScriptedOpenAi([{ status: 429, headers: { "retry-after": "3600" } }]);
    const engine = createOpenAiEngine(config(server.url, { retryAfterMaxMs: 10_000 }));
    const started = Date.now();
    const refused = engine.runTurn(turn(doc(), "hi"));
    await expect(refused).rejects.toThrow(
      "model provider rate limited (429): it asked to retry after 3600 s, longer than the 10 s this agent waits (OPENAI_RETRY_AFTER_MAX_S)",
    );
    expect(Date.now() - started).toBeLessThan(1_000);

    server.push(...Array.from({ length: 6 }, () => ({ status: 429, headers: { "retry-after-ms": "20" } })));
    const exhausted = engine.runTurn(turn(doc(), "hi"));
    await expect(exhausted).rejects.toBeInstanceOf(UnavailableError);
    await expect(exhausted).rejects.toThrow(/rate limited \(429\): still refusing after 5 retries/);
    expect(server.requests).toHaveLength(7);
  });

  it("counts the wait toward the turn's wall-clock cap: the cap ends it mid-wait", async () => {
    server = await startScriptedOpenAi([{ status: 429, headers: { "retry-after": "30" } }]);
    const controller = new AbortController();
    const cap = new AiTimeoutError();
    setTimeout(() => controller.abort(cap), 300);
    const started = Date.now();
    const promise = createOpenAiEngine(config(server.url)).runTurn(turn(doc(), "hi", { signal: controller.signal }));
    await expect(promise).rejects.toBe(cap);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
