import { describe, expect, it } from "vitest";
import { parseToolArguments, repairJson, stripFence } from "./openai-arguments.js";
import { mentionsToolCall, parseTextToolCalls } from "./openai-text-calls.js";

describe("repairJson", () => {
  it.each([
    ['{"a": 1,}', { a: 1 }],
    ['{"a": [1, 2,], }', { a: [1, 2] }],
    ["{'chunk_id': 'c_1', 'html': '<p class=\"x\">it\\'s</p>'}", { chunk_id: "c_1", html: '<p class="x">it\'s</p>' }],
    ['```json\n{"a": 1}\n```', { a: 1 }],
    ['```\n{"a": 1}', { a: 1 }],
    ['{"a": {"b": [1, 2', { a: { b: [1, 2] } }],
    ['{"a": [1, 2], ', { a: [1, 2] }],
    ['{"a": "line\nbreak"}', { a: "line\nbreak" }],
  ])("repairs %j", (text, expected) => {
    expect(repairJson(text)).toEqual(expected);
  });

  it.each([['{"a": oops}'], ["{a: 1}"], ['{"a": 1]'], ["not json at all"], ['{"html": "<p>cut'], ['{"a": 1, "b":']])(
    "gives up on %j (cut-off values are never completed)",
    (text) => {
      expect(repairJson(text)).toBeUndefined();
    },
  );
});

describe("parseToolArguments", () => {
  it("takes valid JSON as is, '' as {}, and a double-encoded object", () => {
    expect(parseToolArguments('{"a":1}')).toEqual({ ok: true, args: { a: 1 }, repaired: false });
    expect(parseToolArguments(" ")).toEqual({ ok: true, args: {}, repaired: false });
    expect(parseToolArguments(JSON.stringify('{"a":1}'))).toMatchObject({ ok: true, args: { a: 1 } });
  });

  it("repairs once and says so; otherwise names the problem", () => {
    expect(parseToolArguments("{'a': 1,}")).toEqual({ ok: true, args: { a: 1 }, repaired: true });
    const bad = parseToolArguments('{"chunk_id": "c_1", explanation: oops');
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error).toMatch(/^arguments are not valid JSON \(.+\); send one JSON object/);
    expect(parseToolArguments("[1, 2]")).toEqual({ ok: false, error: "arguments must be a JSON object" });
  });

  it("strips only a fence around the whole text", () => {
    expect(stripFence("```json\n{}\n```")).toBe("{}");
    expect(stripFence('say ```x``` "y"')).toBe('say ```x``` "y"');
  });
});

const KNOWN = new Set(["read_chunks", "delete_chunk"]);

describe("parseTextToolCalls", () => {
  it("reads Hermes/Qwen <tool_call> blocks, keeping the text around them", () => {
    const content =
      'Let me read it.\n<tool_call>\n{"name": "read_chunks", "arguments": {"chunk_ids": ["c_1"]}}\n</tool_call>\n<tool_call>{"name": "delete_chunk", "arguments": {"chunk_id": "c_2"}}</tool_call>';
    expect(parseTextToolCalls(content, KNOWN)).toEqual({
      content: "Let me read it.",
      calls: [
        { id: "", name: "read_chunks", arguments: '{"chunk_ids":["c_1"]}' },
        { id: "", name: "delete_chunk", arguments: '{"chunk_id":"c_2"}' },
      ],
    });
  });

  it("reads Mistral [TOOL_CALLS] in the v3 and v11 syntaxes", () => {
    expect(
      parseTextToolCalls('[TOOL_CALLS] [{"name": "delete_chunk", "arguments": {"chunk_id": "c_2"}}]', KNOWN)?.calls,
    ).toEqual([{ id: "", name: "delete_chunk", arguments: '{"chunk_id":"c_2"}' }]);
    expect(
      parseTextToolCalls('[TOOL_CALLS]read_chunks[ARGS]{"chunk_ids": ["c_1"]}[TOOL_CALLS]delete_chunk[ARGS]{}', KNOWN)
        ?.calls,
    ).toEqual([
      { id: "", name: "read_chunks", arguments: '{"chunk_ids":["c_1"]}' },
      { id: "", name: "delete_chunk", arguments: "{}" },
    ]);
  });

  it("reads a bare JSON object or array (Llama-style `parameters`, string arguments, a fence)", () => {
    expect(parseTextToolCalls('{"name": "delete_chunk", "parameters": {"chunk_id": "c_2"}}', KNOWN)?.calls).toEqual([
      { id: "", name: "delete_chunk", arguments: '{"chunk_id":"c_2"}' },
    ]);
    expect(
      parseTextToolCalls(
        '```json\n[{"name": "read_chunks", "arguments": "{\\"chunk_ids\\": [\\"c_1\\"]}"}, {"function": {"name": "delete_chunk", "arguments": {}}}]\n```',
        KNOWN,
      )?.calls,
    ).toEqual([
      { id: "", name: "read_chunks", arguments: '{"chunk_ids":["c_1"]}' },
      { id: "", name: "delete_chunk", arguments: "{}" },
    ]);
  });

  it("leaves the content as the reply when a call names an unknown tool or none is there", () => {
    expect(parseTextToolCalls('<tool_call>{"name": "format_disk", "arguments": {}}</tool_call>', KNOWN)).toBeNull();
    expect(parseTextToolCalls('{"name": "Alice", "age": 3}', KNOWN)).toBeNull();
    expect(parseTextToolCalls("[1, 2, 3]", KNOWN)).toBeNull();
    expect(parseTextToolCalls("The clause says {braces} are fine.", KNOWN)).toBeNull();
    expect(parseTextToolCalls("", KNOWN)).toBeNull();
  });

  it("repairs an unclosed call once, and spots a cut-off one", () => {
    expect(
      parseTextToolCalls('<tool_call>{"name": "delete_chunk", "arguments": {"chunk_id": "c_2"', KNOWN)?.calls,
    ).toEqual([{ id: "", name: "delete_chunk", arguments: '{"chunk_id":"c_2"}' }]);
    expect(mentionsToolCall('{"name": "delete_chunk", "argum', KNOWN)).toBe(true);
    expect(mentionsToolCall("Sure, deleted.", KNOWN)).toBe(false);
  });
});
