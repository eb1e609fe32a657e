// POST /v1/chat with the OpenAI-compatible provider, against a scripted model server over real
// HTTP: tool-call turns, streamed and malformed arguments, unknown chunk ids, the time cap.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { sampleContract } from "./support/fixtures.js";
import {
  delayed,
  lastToolResultJson,
  type RecordedRequest,
  type ScriptedOpenAi,
  scriptedEngine,
  startScriptedOpenAi,
} from "./support/scripted-openai.js";
import { startTestStack, type TestStack } from "./support/stack.js";

interface ChatBody {
  response: string;
  session_id: string;
  document_changes?: {
    updated_html?: string;
    chunk_diffs: { chunk_id: string; operation: string; new_html: string; ai_explanation: string }[];
  };
  usage: { was_billable: boolean; ops_charged: number; monthly_used: number };
}

let model: ScriptedOpenAi;
let stack: TestStack;
let capped: TestStack;
let key: string;
let cappedKey: string;

const call = (name: string, args: unknown) => ({
  name,
  arguments: typeof args === "string" ? args : JSON.stringify(args),
});

/** Reacts to the previous search_text result: targets the first chunk it found. */
const firstMatch = (request: RecordedRequest) =>
  lastToolResultJson<{ matches: { chunk_id: string }[] }>(request).matches[0].chunk_id;

beforeAll(async () => {
  model = await startScriptedOpenAi();
  const openai = scriptedEngine(model, {
    models: { core: "scripted-core", turbo: "scripted-turbo", pro: "scripted-pro", max: "scripted-max" },
    requestTimeoutMs: 10_000,
    maxSteps: 12,
  });
  [stack, capped] = await Promise.all([
    startTestStack(inject("infra"), { name: "openai", openai }),
    startTestStack(inject("infra"), {
      name: "capped",
      openai: { ...openai, requestTimeoutMs: 60_000 },
      aiTimeoutMs: 1500,
    }),
  ]);
  key = await stack.createKey("olivia");
  cappedKey = await capped.createKey("olivia");
});
afterAll(async () => {
  await Promise.all([stack?.close(), capped?.close()]);
  await model?.close();
});

async function chat(s: TestStack, k: string, body: Record<string, unknown>) {
  const res = await s.call("POST", "/v1/chat", { key: k, body });
  return { status: res.status, body: (await res.json()) as ChatBody & { detail?: unknown } };
}

describe("chat with an OpenAI-compatible model", () => {
  it("runs a tool-call turn with streamed arguments and commits the edit", async () => {
    model.push(
      { toolCalls: [call("search_text", { query: "Governing Law" })] },
      (req) => ({
        toolCalls: [call("read_chunks", { chunk_ids: [firstMatch(req)] })],
      }),
      (req) => {
        const chunk = lastToolResultJson<{ chunks: { chunk_id: string }[] }>(req).chunks[0].chunk_id;
        return {
          toolCalls: [
            call("replace_chunk", {
              chunk_id: chunk,
              html: "<h2>5. Governing Law and Venue</h2>",
              explanation: "Add venue to the heading",
            }),
          ],
          splitArgs: 7,
        };
      },
      { content: "Renamed the governing law heading." },
    );
    const res = await chat(stack, key, {
      message: "Mention the venue in the governing law heading",
      document_html: sampleContract(),
      model_tier: "pro",
    });
    expect(res.status).toBe(200);
    expect(res.body.response).toBe("Renamed the governing law heading.");
    const diffs = res.body.document_changes?.chunk_diffs ?? [];
    expect(diffs).toHaveLength(1);
    expect(diffs[0].new_html).toContain("Governing Law and Venue");
    expect(diffs[0].ai_explanation).toBe("Add venue to the heading");
    expect(res.body.usage.ops_charged).toBe(1);
    expect(model.requests.at(-1)?.model).toBe("scripted-pro");
  });

  it("returns malformed arguments and unknown chunk ids to the model instead of applying them", async () => {
    const before = model.requests.length;
    model.push(
      { toolCalls: [call("replace_chunk", '{"chunk_id": "c_nope", "html": "<p>x</p>"')] },
      { toolCalls: [call("replace_chunk", { chunk_id: "c_does_not_exist", html: "<p>x</p>", explanation: "guess" })] },
      { content: "I could not find that paragraph." },
    );
    const res = await chat(stack, key, { message: "Edit something", document_html: sampleContract() });
    expect(res.status).toBe(200);
    expect(res.body.response).toBe("I could not find that paragraph.");
    expect(res.body.document_changes?.chunk_diffs).toEqual([]);
    expect(res.body.usage.was_billable).toBe(false);
    const toolReplies = model.requests.slice(before + 1).map((r) => JSON.stringify(r.messages.at(-1)));
    expect(toolReplies[0]).toContain("error");
    expect(toolReplies[1]).toContain("c_does_not_exist");
  });

  it("answers 504 with a plain detail when the turn passes the wall-clock cap, and bills nothing", async () => {
    model.push(delayed(5000, { content: "too late" }));
    const started = Date.now();
    const res = await chat(capped, cappedKey, { message: "Slow edit", document_html: sampleContract() });
    expect(res.status).toBe(504);
    expect(typeof res.body.detail).toBe("string");
    expect(Date.now() - started).toBeLessThan(5000);
    // The reservation was released: the next (non-modifying) turn sees nothing used.
    const next = await chat(capped, cappedKey, { message: "please write me a poem" });
    expect(next.status).toBe(200);
    expect(next.body.usage.monthly_used).toBe(0);
  });
});
