// The structured-output fallback for servers without tool support: Ollama with a model whose
// template has no tools ("does not support tools"), vLLM started without
// --enable-auto-tool-choice, llama.cpp without --jinja, and older LM Studio builds answer 400 to
// `tools`; some proxies silently drop them. The same tools are then described in the system
// prompt and the model answers one JSON object `{"tool_calls": [...], "reply": "..."}`, asked for
// with response_format json_schema (a schema of the operations), else json_object, else plain
// instructions. Tool results go back as user messages, since such servers may reject role "tool".
import type { OpenAI } from "openai";
import { repairJson, stripFence } from "./openai-arguments.js";
import { parseTextToolCalls } from "./openai-text-calls.js";

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ChatTool = OpenAI.Chat.Completions.ChatCompletionFunctionTool;

/** How the fallback asks for JSON, strongest first. */
export type ResponseFormatMode = "json_schema" | "json_object" | "none";

/** The next weaker mode after a server rejected `mode`, or null when none is left. */
export function weakerFormat(mode: ResponseFormatMode): ResponseFormatMode | null {
  return mode === "json_schema" ? "json_object" : mode === "json_object" ? "none" : null;
}

/**
 * The JSON schema of one answer: the operations as `tool_calls` (each `name` one of the tools,
 * `arguments` that tool's parameters) and the `reply` shown to the user when `tool_calls` is empty.
 */
export function operationsSchema(tools: ChatTool[]): Record<string, unknown> {
  return {
    type: "object",
    properties: {
      tool_calls: {
        type: "array",
        items: {
          anyOf: tools.map((tool) => ({
            type: "object",
            properties: { name: { type: "string", enum: [tool.function.name] }, arguments: tool.function.parameters },
            required: ["name", "arguments"],
            additionalProperties: false,
          })),
        },
      },
      reply: { type: "string" },
    },
    required: ["tool_calls", "reply"],
    additionalProperties: false,
  };
}

/** The request fields of a fallback request: the rewritten messages and the response_format, if any. */
export function structuredRequest(
  messages: ChatMessage[],
  tools: ChatTool[],
  mode: ResponseFormatMode,
): {
  messages: ChatMessage[];
  response_format?: OpenAI.Chat.Completions.ChatCompletionCreateParams["response_format"];
} {
  const rewritten = rewriteMessages(messages, tools);
  if (mode === "json_schema") {
    return {
      messages: rewritten,
      response_format: {
        type: "json_schema",
        json_schema: { name: "redline_step", schema: operationsSchema(tools), strict: false },
      },
    };
  }
  if (mode === "json_object") return { messages: rewritten, response_format: { type: "json_object" } };
  return { messages: rewritten };
}

function protocol(tools: ChatTool[]): string {
  const list = tools.map((tool) =>
    JSON.stringify({
      name: tool.function.name,
      description: tool.function.description,
      parameters: tool.function.parameters,
    }),
  );
  return [
    "",
    "TOOLS. This server has no native tool calls, so you call the tools by answering with exactly one JSON object and nothing else:",
    '{"tool_calls": [{"name": "<tool>", "arguments": {...}}], "reply": ""}',
    'Tool results come back in the next user message. When you are finished, answer {"tool_calls": [], "reply": "<your reply to the user>"}.',
    "The tools (name, description, JSON schema of the arguments):",
    ...list,
  ].join("\n");
}

/**
 * The conversation in a shape any chat server accepts: the protocol appended to the system
 * prompt, assistant tool calls as the JSON they were asked in, tool results as one user message
 * per round.
 */
function rewriteMessages(messages: ChatMessage[], tools: ChatTool[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  let results: string[] = [];
  const flush = (): void => {
    if (results.length === 0) return;
    out.push({ role: "user", content: `Tool results:\n${results.join("\n")}` });
    results = [];
  };
  for (const message of messages) {
    if (message.role === "tool") {
      results.push(`${message.tool_call_id}: ${typeof message.content === "string" ? message.content : ""}`);
      continue;
    }
    flush();
    if (message.role === "system" && out.length === 0 && typeof message.content === "string") {
      out.push({ role: "system", content: message.content + protocol(tools) });
    } else if (message.role === "assistant" && message.tool_calls && message.tool_calls.length > 0) {
      const calls = message.tool_calls.flatMap((call) =>
        call.type === "function"
          ? [{ id: call.id, name: call.function.name, arguments: safeParse(call.function.arguments) }]
          : [],
      );
      out.push({ role: "assistant", content: JSON.stringify({ tool_calls: calls, reply: "" }) });
    } else {
      out.push(message);
    }
  }
  flush();
  return out;
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Reads a fallback answer: `{"tool_calls": [...], "reply": "..."}` (fenced or slightly broken
 * JSON repaired once). If a call names an unknown tool none is run and the reply (else the whole
 * text) is the answer, as for text tool calls. Text that is not such an object is tried as text
 * tool calls, else it is the reply.
 */
export function parseStructuredAnswer(
  content: string,
  known: ReadonlySet<string>,
): { content: string; toolCalls: { id: string; name: string; arguments: string }[] } {
  const body = stripFence(content.trim());
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    value = repairJson(body);
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value) && "reply" in value) {
    const record = value as { tool_calls?: unknown; reply?: unknown };
    const reply = typeof record.reply === "string" ? record.reply : "";
    const calls = Array.isArray(record.tool_calls) ? record.tool_calls : [];
    if (calls.length === 0) return { content: reply, toolCalls: [] };
    const parsed = parseTextToolCalls(JSON.stringify(calls), known);
    if (parsed) return { content: reply, toolCalls: parsed.calls };
    return { content: reply || content, toolCalls: [] };
  }
  const text = parseTextToolCalls(content, known);
  return text ? { content: text.content, toolCalls: text.calls } : { content, toolCalls: [] };
}
