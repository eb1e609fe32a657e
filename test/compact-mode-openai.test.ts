// response_mode=compact told to the model (#36 part 2): POST /v1/chat in compact mode sends no
// document back, so the agent tells the model that a section the user asks to see goes in the
// reply text (interface spec, endpoint 1); full mode keeps the short-reply rule. Real stack, the
// model a scripted OpenAI-compatible server over HTTP.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { sampleContract } from "./support/fixtures.js";
import {
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
  document_changes?: { updated_html?: string; chunk_diffs: unknown[] };
  usage: { was_billable: boolean };
}

let model: ScriptedOpenAi;
let stack: TestStack;
let key: string;

beforeAll(async () => {
  model = await startScriptedOpenAi();
  stack = await startTestStack(inject("infra"), {
    name: "compact_openai",
    openai: scriptedEngine(model, { requestTimeoutMs: 10_000, maxSteps: 6 }),
  });
  key = await stack.createKey("cora");
});
afterAll(async () => {
  await stack?.close();
  await model?.close();
});

function systemPrompt(request: RecordedRequest): string {
  const first = request.messages[0];
  return first.role === "system" && typeof first.content === "string" ? first.content : "";
}

/** The scripted model: finds the section's text, reads it, and answers with it. */
function showSectionScript(): void {
  model.push(
    { toolCalls: [{ name: "search_text", arguments: JSON.stringify({ query: "governed by the laws" }) }] },
    (request) => {
      const matches = lastToolResultJson<{ matches: { chunk_id: string }[] }>(request).matches;
      return { toolCalls: [{ name: "read_chunks", arguments: JSON.stringify({ chunk_ids: [matches[0].chunk_id] }) }] };
    },
    (request) => {
      const read = lastToolResultJson<{ chunks: { html: string }[] }>(request);
      return { content: `## 5. Governing Law\n\n${read.chunks[0].html.replace(/<[^>]+>/g, "")}` };
    },
  );
}

describe("response_mode told to the model", () => {
  it("in compact mode, the system prompt asks for the requested section's content in the reply", async () => {
    model.clear();
    const before = model.requests.length;
    showSectionScript();
    const res = await stack.call("POST", "/v1/chat", {
      key,
      body: { message: "show me section 5", document_html: sampleContract(), response_mode: "compact" },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as ChatBody;
    expect(body.response).toContain("governed by the laws of the State of New York");
    expect(body.document_changes?.updated_html).toBeUndefined();
    const prompt = systemPrompt(model.requests[before]);
    expect(prompt).toContain("compact mode");
    expect(prompt).toContain("put its full content in your reply");
    expect(prompt).not.toContain("Do not paste the document.");
  });

  it("in full mode (the default), the model is told to keep the reply short", async () => {
    model.clear();
    const before = model.requests.length;
    model.push({ content: "Section 5 sets New York law." });
    const res = await stack.call("POST", "/v1/chat", {
      key,
      body: { message: "show me section 5", document_html: sampleContract() },
    });
    expect(res.status).toBe(200);
    const prompt = systemPrompt(model.requests[before]);
    expect(prompt).not.toContain("compact mode");
    expect(prompt).toContain("Do not paste the document.");
  });
});
