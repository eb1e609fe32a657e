// Tool calls written as text in `content` instead of `tool_calls`. Servers whose chat template or
// tool parser does not match the model pass the model's own call syntax through as text:
// Hermes-style templates (Qwen 2.5/3, Hermes, many llama.cpp and Ollama GGUFs) write
// `<tool_call>{"name": …, "arguments": …}</tool_call>`, Mistral models `[TOOL_CALLS][{…}]` (or
// `[TOOL_CALLS]name[ARGS]{…}` with the v11 tokenizer), and Llama 3.x and others a bare JSON object
// or array of calls as the whole content. These become tool calls only when every call names a
// known tool; otherwise the content is the model's reply.
import { parseToolArguments, repairJson, stripFence } from "./openai-arguments.js";

/** A tool call recovered from text; `arguments` is JSON text, like a native call's; `id` is "". */
export interface TextToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** What the content held: the calls and the text around them, or null when it held no call. */
export interface TextCalls {
  calls: TextToolCall[];
  /** The content with the call syntax removed (the model's preamble), trimmed. */
  content: string;
}

const HERMES = /<tool_call>\s*([\s\S]*?)\s*(?:<\/tool_call>|$)/g;
const MISTRAL_MARK = "[TOOL_CALLS]";

/**
 * Finds tool calls in `content` (see the file comment) naming only tools in `known`; null when
 * there are none, a call names an unknown tool, or the call syntax cannot be read even after one
 * JSON repair. Ids are empty: the loop names each call.
 */
export function parseTextToolCalls(content: string, known: ReadonlySet<string>): TextCalls | null {
  const text = content.trim();
  if (text === "") return null;
  let found: { raw: unknown[]; rest: string } | null = null;
  if (text.includes("<tool_call>")) {
    const raw: unknown[] = [];
    for (const match of text.matchAll(HERMES)) {
      const value = readJson(match[1]);
      if (value === undefined) return null;
      raw.push(...(Array.isArray(value) ? value : [value]));
    }
    found = { raw, rest: text.replace(HERMES, "").trim() };
  } else if (text.includes(MISTRAL_MARK)) {
    found = mistralCalls(text);
  } else if (/^(```[\w-]*\s*)?[[{]/.test(text)) {
    const value = readJson(text);
    if (value === undefined) return null;
    const list = Array.isArray(value)
      ? value
      : isRecord(value) && Array.isArray(value.tool_calls)
        ? value.tool_calls
        : [value];
    found = { raw: list, rest: "" };
  }
  if (found === null || found.raw.length === 0) return null;
  const calls: TextToolCall[] = [];
  for (const item of found.raw) {
    const call = normalise(item);
    if (call === null || !known.has(call.name)) return null;
    calls.push(call);
  }
  return { calls, content: found.rest };
}

/** `[TOOL_CALLS][{…}, …]` (v3 tokenizer) or one or more `[TOOL_CALLS]name[ARGS]{…}` (v11). */
function mistralCalls(text: string): { raw: unknown[]; rest: string } | null {
  const at = text.indexOf(MISTRAL_MARK);
  const rest = text.slice(0, at).trim();
  const body = text.slice(at);
  if (body.includes("[ARGS]")) {
    const raw: unknown[] = [];
    for (const part of body.split(MISTRAL_MARK).slice(1)) {
      const [name, args] = part.split("[ARGS]");
      const value = readJson(args ?? "");
      if (value === undefined) return null;
      raw.push({ name: name.trim(), arguments: value });
    }
    return { raw, rest };
  }
  const value = readJson(body.slice(MISTRAL_MARK.length));
  if (value === undefined) return null;
  return { raw: Array.isArray(value) ? value : [value], rest };
}

function readJson(text: string): unknown {
  const body = stripFence(text.trim());
  try {
    return JSON.parse(body);
  } catch {
    return repairJson(body);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * One call object in any of the shapes seen: `{name, arguments}`, `{name, parameters}` (Llama
 * 3.x), `{function: {name, arguments}}` (an OpenAI call pasted as text); arguments as an object
 * or as JSON text.
 */
function normalise(item: unknown): TextToolCall | null {
  if (!isRecord(item)) return null;
  const inner = isRecord(item.function) ? item.function : item;
  const name = inner.name;
  if (typeof name !== "string" || name === "") return null;
  const args = inner.arguments ?? inner.parameters ?? {};
  let text: string;
  if (typeof args === "string") {
    const parsed = parseToolArguments(args);
    text = parsed.ok ? JSON.stringify(parsed.args) : args;
  } else if (isRecord(args)) {
    text = JSON.stringify(args);
  } else {
    return null;
  }
  return { id: "", name, arguments: text };
}

/**
 * True when `content` starts a tool call in one of the text syntaxes (or as JSON naming a known
 * tool) without it having to parse: what an answer cut off at the output limit looks like.
 */
export function mentionsToolCall(content: string, known: ReadonlySet<string>): boolean {
  const text = content.trim();
  if (text.includes("<tool_call>") || text.includes(MISTRAL_MARK)) return true;
  if (!/^(```[\w-]*\s*)?[[{]/.test(text)) return false;
  return [...known].some((name) => text.includes(`"${name}"`) || text.includes(`'${name}'`));
}
