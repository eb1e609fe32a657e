// POST /v1/chat and /v1/chat/async against a scripted OpenAI-compatible server that behaves like
// real ones do (issue #36 part 3): tool calls written as text, broken arguments, parallel calls,
// no tool support, no streaming, answers cut off mid-call, a small context window, Retry-After.
// Each tier runs its own model name, so what the agent learns about one (no tools, no stream)
// does not leak into the others.
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { sampleContract } from "./support/fixtures.js";
import { startJob, waitForJob } from "./support/jobs.js";
import {
  lastToolResult,
  lastToolResultJson,
  type RecordedRequest,
  type ScriptedOpenAi,
  type ScriptStep,
  scriptedEngine,
  startScriptedOpenAi,
} from "./support/scripted-openai.js";
import { startTestStack, type TestStack } from "./support/stack.js";

interface ChatBody {
  response: string;
  detail?: string;
  document_changes?: { chunk_diffs: { chunk_id: string; operation: string; new_html: string }[] };
  usage: { was_billable: boolean; ops_charged: number };
}

let model: ScriptedOpenAi;
let stack: TestStack;
let tight: TestStack;
let key: string;
let tightKey: string;

beforeAll(async () => {
  model = await startScriptedOpenAi();
  const models = { core: "q-core", turbo: "q-no-tools", pro: "q-no-stream", max: "q-max" };
  const openai = { ...scriptedEngine(model, { models, requestTimeoutMs: 10_000, maxSteps: 8 }), maxRetries: 0 };
  [stack, tight] = await Promise.all([
    startTestStack(inject("infra"), { name: "quirks", openai: { ...openai, retryAfterMaxMs: 5_000 } }),
    // A small local model: 4k tokens of context, and a short wall-clock cap to see Retry-After count toward it.
    startTestStack(inject("infra"), {
      name: "quirks_tight",
      openai: {
        ...openai,
        models: { core: "t-core", turbo: "t-core", pro: "t-core", max: "t-core" },
        contextTokens: 4096,
      },
      aiTimeoutMs: 2_500,
    }),
  ]);
  key = await stack.createKey("quinn");
  tightKey = await tight.createKey("quinn");
});
afterEach(() => model.clear());
afterAll(async () => {
  await Promise.all([stack?.close(), tight?.close()]);
  await model?.close();
});

async function chat(s: TestStack, k: string, body: Record<string, unknown>) {
  const res = await s.call("POST", "/v1/chat", { key: k, body });
  return { status: res.status, body: (await res.json()) as ChatBody };
}

const json = (value: unknown) => JSON.stringify(value);
const CONTRACT = sampleContract();
/** The chunk ids of the outline lines in the request's system prompt that contain `text`. */
const idsIn = (request: RecordedRequest, text: string): string[] =>
  String(request.messages[0].content)
    .split("\n")
    .filter((line) => /^\S+ (#+|\w+:) /.test(line) && line.includes(text))
    .map((line) => line.split(" ")[0]);
/** The id of the sample contract's "5. Governing Law" heading, as the model sees it. */
const governingLaw = (request: RecordedRequest): string => {
  const [id] = idsIn(request, "## 5. Governing Law");
  if (!id) throw new Error("the system prompt lists no Governing Law heading");
  return id;
};
const renameHeading = (chunkId: string, explanation = "Add venue") => ({
  chunk_id: chunkId,
  html: "<h2>5. Governing Law and Venue</h2>",
  explanation,
});

describe("tool calls sent as text in content", () => {
  it("runs a Hermes/Qwen <tool_call> read, then a Mistral [TOOL_CALLS] edit, and commits it", async () => {
    model.push(
      { content: `<tool_call>\n${json({ name: "search_text", arguments: { query: "Governing Law" } })}\n</tool_call>` },
      (request) => {
        const found = lastToolResultJson<{ matches: { chunk_id: string }[] }>(request).matches[0].chunk_id;
        return {
          content: `[TOOL_CALLS][${json({ name: "replace_chunk", arguments: renameHeading(found) })}]`,
        };
      },
      { content: "Renamed the heading." },
    );
    const res = await chat(stack, key, { message: "Mention the venue", document_html: CONTRACT });
    expect(res.status).toBe(200);
    expect(res.body.response).toBe("Renamed the heading.");
    expect(res.body.document_changes?.chunk_diffs).toMatchObject([
      { operation: "edit", new_html: expect.stringContaining("Governing Law and Venue") },
    ]);
    expect(res.body.usage.ops_charged).toBe(1);
  });

  it("answers with the text when a bare JSON object names no known tool", async () => {
    const text = json({ name: "weather_lookup", arguments: { city: "Oslo" } });
    model.push({ content: text });
    const res = await chat(stack, key, { message: "Weather?", document_html: CONTRACT });
    expect(res.status).toBe(200);
    expect(res.body.response).toBe(text);
    expect(res.body.document_changes?.chunk_diffs ?? []).toEqual([]);
  });
});

describe("arguments that are not valid JSON", () => {
  it("repairs single quotes and a trailing comma once; an unrepairable call is a tool error, not a 5xx", async () => {
    const before = model.requests.length;
    model.push(
      { toolCalls: [{ name: "replace_chunk", arguments: '{"chunk_id": ' }] },
      (request) => ({
        toolCalls: [
          {
            name: "replace_chunk",
            arguments: `{'chunk_id': '${governingLaw(request)}', 'html': '<h2>5. Governing Law and Venue</h2>', 'explanation': 'venue',}`,
          },
        ],
      }),
      { content: "Done." },
    );
    const res = await chat(stack, key, { message: "Mention the venue", document_html: CONTRACT });
    expect(res.status).toBe(200);
    expect(JSON.parse(lastToolResult(model.requests[before + 1])).error).toMatch(/^arguments are not valid JSON/);
    expect(res.body.document_changes?.chunk_diffs).toHaveLength(1);
  });
});

describe("parallel tool calls", () => {
  it("applies every call of one message whose streamed fragments interleave", async () => {
    let ids: string[] = [];
    model.push(
      (request) => {
        ids = idsIn(request, " ## ").slice(0, 3);
        return {
          toolCalls: ids.map((id, i) => ({
            name: "replace_chunk",
            arguments: json({ chunk_id: id, html: `<h2>Section ${i + 1}</h2>`, explanation: "Renumber" }),
          })),
          splitArgs: 6,
          interleave: true,
        };
      },
      { content: "Renamed three headings." },
    );
    const res = await chat(stack, key, { message: "Rename the first three headings", document_html: CONTRACT });
    expect(res.status).toBe(200);
    const diffs = res.body.document_changes?.chunk_diffs ?? [];
    expect(ids).toHaveLength(3);
    expect(diffs.map((d) => d.chunk_id).sort()).toEqual([...ids].sort());
    expect(diffs.map((d) => /Section \d/.exec(d.new_html)?.[0]).sort()).toEqual([
      "Section 1",
      "Section 2",
      "Section 3",
    ]);
  });
});

describe("a server without tool support", () => {
  it("falls back to a JSON object of operations (json_schema) and keeps it for the next turn", async () => {
    const answers = [
      (request: RecordedRequest) =>
        json({ tool_calls: [{ name: "replace_chunk", arguments: renameHeading(governingLaw(request)) }], reply: "" }),
      () => json({ tool_calls: [], reply: "Renamed it." }),
      () => json({ tool_calls: [], reply: "It is a services agreement." }),
    ];
    // vLLM started without a tool parser answers 400 to `tools`; a rejection uses no answer up.
    const step = (request: RecordedRequest): ScriptStep =>
      request.tools
        ? { status: 400, body: json({ error: { message: '"auto" tool choice requires --enable-auto-tool-choice' } }) }
        : { content: answers.shift()?.(request) ?? "done" };
    const before = model.requests.length;
    model.push(step, step, step);
    const res = await chat(stack, key, { message: "Mention the venue", document_html: CONTRACT, model_tier: "turbo" });
    expect(res.status).toBe(200);
    expect(res.body.response).toBe("Renamed it.");
    expect(res.body.document_changes?.chunk_diffs).toHaveLength(1);
    const sent = model.requests.slice(before);
    expect(sent.map((r) => r.tools !== undefined)).toEqual([true, false, false]);
    expect(sent.slice(1).map((r) => (r.response_format as { type: string }).type)).toEqual([
      "json_schema",
      "json_schema",
    ]);

    model.push(step);
    const next = await chat(stack, key, { message: "What is this?", document_html: CONTRACT, model_tier: "turbo" });
    expect(next.body.response).toBe("It is a services agreement.");
    expect(model.requests.at(-1)?.tools).toBeUndefined();
  });
});

describe("no streaming", () => {
  it("reads a single JSON body sent back to a streamed request", async () => {
    const before = model.requests.length;
    model.push(
      (request) => ({
        toolCalls: [{ name: "replace_chunk", arguments: json(renameHeading(governingLaw(request))) }],
        ignoreStream: true,
      }),
      { content: "Renamed.", ignoreStream: true },
    );
    const res = await chat(stack, key, { message: "Mention the venue", document_html: CONTRACT, model_tier: "pro" });
    expect(res.status).toBe(200);
    expect(res.body.response).toBe("Renamed.");
    expect(res.body.document_changes?.chunk_diffs).toHaveLength(1);
    expect(model.requests.slice(before).map((r) => r.stream)).toEqual([true, false]);
  });
});

describe('finish_reason "length" mid-call', () => {
  it("never applies the cut call, asks again once, and commits the complete one", async () => {
    const before = model.requests.length;
    model.push(
      (request) => ({
        toolCalls: [{ name: "replace_chunk", arguments: json(renameHeading(governingLaw(request))).slice(0, 60) }],
        finishReason: "length",
      }),
      (request) => ({
        toolCalls: [{ name: "replace_chunk", arguments: json(renameHeading(governingLaw(request), "Shorter")) }],
      }),
      { content: "Renamed." },
    );
    const res = await chat(stack, key, { message: "Mention the venue", document_html: CONTRACT });
    expect(res.status).toBe(200);
    expect(res.body.document_changes?.chunk_diffs).toHaveLength(1);
    const retry = model.requests[before + 1].messages.at(-1);
    expect(retry).toMatchObject({ role: "user" });
    expect(String(retry?.content)).toContain("cut off");
  });
});

describe("a context window smaller than the prompt", () => {
  it("cuts reads to OPENAI_CONTEXT_TOKENS and shrinks once when the provider says the context is exceeded", async () => {
    const big = `<h1>Big</h1>\n<p>${"A long clause about everything. ".repeat(1500)}</p>`;
    const before = model.requests.length;
    model.push(
      {
        status: 400,
        body: json({
          error: {
            message: "the request exceeds the available context size, try increasing it",
            type: "exceed_context_size_error",
          },
        }),
      },
      { toolCalls: [{ name: "search_text", arguments: json({ query: "long clause" }) }] },
      (request) => {
        const found = lastToolResultJson<{ matches: { chunk_id: string }[] }>(request).matches[0].chunk_id;
        return { toolCalls: [{ name: "read_chunks", arguments: json({ chunk_ids: [found] }) }] };
      },
      { content: "It is one long clause." },
    );
    const res = await chat(tight, tightKey, { message: "Summarise", document_html: big });
    expect(res.status).toBe(200);
    expect(res.body.response).toBe("It is one long clause.");
    const read = lastToolResultJson<{ chunks: { html: string; warning?: string }[] }>(model.requests[before + 3]);
    expect(Buffer.byteLength(read.chunks[0].html)).toBeLessThan(2_500);
    expect(read.chunks[0].warning).toContain("cut at");
  });
});

describe("429/503 with Retry-After", () => {
  it("backs off as told and answers", async () => {
    const before = model.requests.length;
    model.push(
      { status: 429, headers: { "retry-after": "1" } },
      { status: 503, headers: { "retry-after": "1" } },
      { content: "Here." },
    );
    const res = await chat(stack, key, { message: "Hello", document_html: CONTRACT });
    expect(res.status).toBe(200);
    expect(res.body.response).toBe("Here.");
    const times = model.requestTimes.slice(before);
    expect(times[2] - times[0]).toBeGreaterThanOrEqual(1_900);
  });

  it("fails with a clear error when the provider asks for more than the cap", async () => {
    model.push({ status: 429, headers: { "retry-after": "600" } });
    const res = await chat(stack, key, { message: "Hello", document_html: CONTRACT });
    expect(res.status).toBe(503);
    expect(res.body.detail).toBeDefined();
    model.push({ status: 429, headers: { "retry-after": "600" } });
    const job = await startJob(stack, key, { message: "Hello", document_html: CONTRACT });
    const failed = await waitForJob(stack, key, job.body.job_id, ["failed", "completed"]);
    expect(failed.status).toBe("failed");
    expect(failed.error).toContain("rate limited (429): it asked to retry after 600 s");
  });

  it("counts the waits toward a job's wall-clock cap: the job ends at the cap with its wrap-up answer", async () => {
    for (let i = 0; i < 5; i++) model.push({ status: 429, headers: { "retry-after": "1" } });
    const started = Date.now();
    const job = await startJob(tight, tightKey, { message: "Hello", document_html: CONTRACT });
    const done = await waitForJob(tight, tightKey, job.body.job_id, ["failed", "completed"]);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(done.status).toBe("completed");
    expect(done.result?.response).toMatch(/limit/);
    expect(done.result?.usage.was_billable).toBe(false);
  });
});
