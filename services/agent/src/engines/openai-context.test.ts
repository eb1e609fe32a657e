import { describe, expect, it } from "vitest";
import { budgetsFor, DEFAULT_BUDGETS, fitHistory, isContextLengthError, shrunk } from "./openai-context.js";
import { retryAfterMs } from "./openai-request.js";
import { operationsSchema, parseStructuredAnswer } from "./openai-structured.js";
import { toolSchemas } from "./openai-tools.js";

describe("context budgets", () => {
  it("keeps today's budgets without a context length and for a large window", () => {
    expect(budgetsFor(undefined)).toBe(DEFAULT_BUDGETS);
    const large = budgetsFor(128_000);
    expect(large).toMatchObject({ readBytes: 20_000, singleChunkMaxBytes: 64_000, outlineBytes: 24_000 });
  });

  it("cuts reads, outline pages and history to fit a 4k window, and halves them when shrunk", () => {
    const small = budgetsFor(4096);
    // 4096 tokens × 3 bytes, a quarter kept for the answer, less the fixed prompt: ~3.2 KB of room.
    expect(small.readBytes).toBeLessThan(2_000);
    expect(small.outlineBytes).toBeLessThan(2_000);
    expect(small.readBytes + small.historyBytes + small.inlineOutlineBytes).toBeLessThan(4096 * 3 * 0.75);
    const half = shrunk(small);
    expect(half.readBytes).toBeLessThan(small.readBytes);
    expect(half.historyBytes).toBe(0);
  });

  it("keeps the newest history that fits", () => {
    const turns = [{ content: "a".repeat(50) }, { content: "b".repeat(50) }, { content: "c".repeat(50) }];
    expect(fitHistory(turns, 120)).toEqual(turns.slice(1));
    expect(fitHistory(turns, Number.POSITIVE_INFINITY)).toBe(turns);
  });

  it.each([
    ["This model's maximum context length is 4096 tokens. However, you requested 9000 tokens"],
    ["the request exceeds the available context size, try increasing it"],
    [
      "Trying to keep the first 5000 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens",
    ],
  ])("recognises %j as a context-length error", (message) => {
    expect(isContextLengthError(message)).toBe(true);
  });

  it("does not take other 400s for one", () => {
    expect(isContextLengthError("model does not support tools")).toBe(false);
    expect(isContextLengthError("x", "context_length_exceeded")).toBe(true);
  });
});

describe("retryAfterMs", () => {
  const headers = (entries: Record<string, string>) => new Headers(entries);
  it("reads retry-after-ms, seconds and an HTTP date", () => {
    expect(retryAfterMs(headers({ "retry-after-ms": "250" }))).toBe(250);
    expect(retryAfterMs(headers({ "retry-after": "2" }))).toBe(2000);
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterMs(headers({ "retry-after": "Thu, 01 Jan 2026 00:00:05 GMT" }), now)).toBe(5000);
    expect(retryAfterMs(headers({ "retry-after": "Wed, 31 Dec 2025 00:00:00 GMT" }), now)).toBe(0);
    expect(retryAfterMs(headers({ "retry-after": "soon" }))).toBeUndefined();
    expect(retryAfterMs(headers({}))).toBeUndefined();
  });
});

describe("structured fallback", () => {
  const tools = toolSchemas();
  const known = new Set(tools.map((tool) => tool.function.name));

  it("describes each operation with its tool's parameters", () => {
    const schema = operationsSchema(tools) as {
      properties: { tool_calls: { items: { anyOf: { properties: { name: { enum: string[] } } }[] } } };
    };
    const names = schema.properties.tool_calls.items.anyOf.map((option) => option.properties.name.enum[0]);
    expect(names).toEqual([...known]);
  });

  it("reads calls and a reply, fenced or not, and falls back to the text as the reply", () => {
    expect(
      parseStructuredAnswer(
        '```json\n{"tool_calls": [{"name": "get_outline", "arguments": {}}], "reply": ""}\n```',
        known,
      ),
    ).toEqual({ content: "", toolCalls: [{ id: "", name: "get_outline", arguments: "{}" }] });
    expect(parseStructuredAnswer('{"tool_calls": [], "reply": "All done."}', known)).toEqual({
      content: "All done.",
      toolCalls: [],
    });
    expect(parseStructuredAnswer("Plain words.", known)).toEqual({ content: "Plain words.", toolCalls: [] });
    expect(
      parseStructuredAnswer('{"tool_calls": [{"name": "rm_rf", "arguments": {}}], "reply": "hm"}', known).toolCalls,
    ).toEqual([]);
  });
});
