// The OpenAI-compatible engine: a streamed tool-calling loop in which the model reads the
// document through tools (outline, read, search) and edits it chunk by chunk. The document
// is never sent whole; the model pulls what it needs, so a turn costs roughly what it reads.
// Real servers differ from OpenAI; each difference is handled where it shows: the request
// (openai-request.ts: streaming, tools, Retry-After), the answer (openai-text-calls.ts, the
// structured fallback in openai-structured.ts), the arguments (openai-arguments.ts) and the
// context window (openai-context.ts).
import { UnavailableError } from "@redline/service-kit";
import { OpenAI } from "openai";
import { FILES_TOOLS, isFilesTool, runFilesTool } from "./files-tools.js";
import type { OpenAiEngineConfig } from "./openai-config.js";
import { budgetsFor, type ContextBudgets, fitHistory, shrunk } from "./openai-context.js";
import { ContextLengthError, type ModelAnswer, requestAnswer } from "./openai-request.js";
import { mentionsToolCall, parseTextToolCalls } from "./openai-text-calls.js";
import { formatOutline, runTool, toolSchemas } from "./openai-tools.js";
import type { Engine, TurnInput, TurnOutput } from "./types.js";

export type { OpenAiEngineConfig } from "./openai-config.js";
export { OPENAI_ENGINE_TOOLS } from "./openai-tools.js";

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ContentPart = OpenAI.Chat.Completions.ChatCompletionContentPart;

// A document whose outline fits these caps gets it in the system prompt, saving a round.
const INLINE_OUTLINE_MAX_CHUNKS = 150;

/** Sent when an answer was cut off at the output limit inside a tool call (finish_reason "length"). */
const CUT_OFF_NOTE =
  "Your last answer was cut off at the output token limit in the middle of a tool call, so none of it was applied. Send the call again, shorter: for long HTML, edit fewer blocks per call and make several calls.";

/**
 * Creates the engine for an OpenAI-compatible provider. `runTurn` rejects with the
 * signal's reason when `input.signal` aborts, and with UnavailableError when the provider
 * fails (HTTP 4xx/5xx after retries, connection errors, no complete response within
 * `requestTimeoutMs`, a prompt that does not fit the context window even shrunk).
 * Tool errors never reject: they go back to the model as `{"error"}`.
 */
export function createOpenAiEngine(cfg: OpenAiEngineConfig): Engine {
  const client = new OpenAI({
    baseURL: cfg.baseURL,
    // Local OpenAI-compatible servers often need no key; the SDK refuses an empty one.
    apiKey: cfg.apiKey || "unused",
    organization: null,
    project: null,
    // Retries are the request's own (openai-request.ts), so Retry-After is honoured as asked.
    maxRetries: 0,
    timeout: cfg.requestTimeoutMs,
  });
  return {
    name: "openai",
    runTurn: (input) => runTurn(client, cfg, input),
  };
}

async function runTurn(client: OpenAI, cfg: OpenAiEngineConfig, input: TurnInput): Promise<TurnOutput> {
  input.signal.throwIfAborted();
  const doc = input.document;
  let budgets = budgetsFor(cfg.contextTokens);
  const messages = openingMessages(input, budgets);
  let historyCount = messages.length - 2;

  const maxSteps = scaledSteps(cfg.maxSteps, input.thinkingDepth);
  const model = cfg.models[input.modelTier];
  // Tool schemas ride along on every request: offer the attachment tools only when they can find something.
  const documentTools = toolSchemas(budgets);
  const tools = input.files && input.files.attachmentCount > 0 ? [...documentTools, ...FILES_TOOLS] : documentTools;
  const known = new Set(tools.map((tool) => tool.function.name));
  const toolsBytes = Buffer.byteLength(JSON.stringify(tools));
  let bytesSentToModel = 0;
  let toolCalls = 0;
  let edits = 0;
  let shrank = false;
  let askedAfterCutOff = false;

  // Index of the first tool message of the latest round: results before it get compacted.
  let latestRound = messages.length;
  for (let step = 0; step < maxSteps; step++) {
    input.signal.throwIfAborted();
    compactOldToolResults(messages, latestRound);
    bytesSentToModel += Buffer.byteLength(JSON.stringify(messages)) + toolsBytes;
    let answer: ModelAnswer;
    try {
      answer = await requestAnswer(client, cfg, { model, messages, tools, signal: input.signal });
    } catch (err) {
      if (!(err instanceof ContextLengthError)) throw err;
      if (shrank) {
        throw new UnavailableError(
          `model provider unavailable: the prompt does not fit the model's context window even shrunk (${err.message}); set OPENAI_CONTEXT_TOKENS to the server's context length`,
        );
      }
      // Once per turn: drop the history, halve the budgets, compact every large tool result.
      shrank = true;
      budgets = shrunk(budgets);
      shrinkMessages(messages, historyCount, input, budgets);
      historyCount = 0;
      latestRound = messages.length;
      continue;
    }
    if (answer.toolCalls.length === 0) {
      const text = parseTextToolCalls(answer.content, known);
      if (text) answer = { ...answer, content: text.content, toolCalls: text.calls };
    }
    if (answer.finishReason === "length" && (answer.toolCalls.length > 0 || mentionsToolCall(answer.content, known))) {
      // A call cut off mid-arguments may still parse (or be "repaired"): never run any of it.
      if (askedAfterCutOff) {
        return {
          reply: `The model's answer was cut off at its output limit twice in the middle of an edit, so it was not applied${edits > 0 ? `; the ${edits} edit${edits === 1 ? "" : "s"} made before are kept` : ""}. Ask for a smaller change.`,
          toolCalls,
          bytesSentToModel,
        };
      }
      askedAfterCutOff = true;
      messages.push({ role: "user", content: CUT_OFF_NOTE });
      continue;
    }
    if (answer.toolCalls.length === 0) {
      const reply = answer.content.trim() || (edits > 0 ? `Made ${edits} edit${edits === 1 ? "" : "s"}.` : "Done.");
      return { reply, toolCalls, bytesSentToModel };
    }
    const calls = answer.toolCalls.map((call, i) => ({ ...call, id: call.id || `call_${step}_${i}` }));
    messages.push({
      role: "assistant",
      content: answer.content === "" ? null : answer.content,
      tool_calls: calls.map((call) => ({
        id: call.id,
        type: "function",
        function: { name: call.name, arguments: call.arguments },
      })),
    });
    latestRound = messages.length;
    for (const call of calls) {
      toolCalls++;
      const result =
        input.files && isFilesTool(call.name)
          ? await runFilesTool(input.files, call.name, call.arguments, input.onProgress)
          : runTool(doc, call.name, call.arguments, input.onProgress, budgets);
      if (result.edited) edits++;
      messages.push({ role: "tool", tool_call_id: call.id, content: result.content });
    }
  }
  return {
    reply: `I stopped after ${maxSteps} steps before finishing${edits > 0 ? `; the ${edits} edit${edits === 1 ? "" : "s"} made so far are kept` : ""}. Ask me to continue if more is needed.`,
    toolCalls,
    bytesSentToModel,
    stoppedAtStepLimit: true,
  };
}

/** The system prompt, the history that fits the budget, and the user's message, in that order. */
function openingMessages(input: TurnInput, budgets: ContextBudgets): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: "system", content: systemPrompt(input, budgets) }];
  const history = fitHistory(
    input.history.filter((turn) => turn.content.trim() !== ""),
    budgets.historyBytes,
  );
  for (const turn of history) {
    messages.push(
      turn.sender === "user" ? { role: "user", content: turn.content } : { role: "assistant", content: turn.content },
    );
  }
  messages.push({ role: "user", content: userContent(input) });
  return messages;
}

/**
 * After a context-length error: the system prompt rebuilt for the smaller budgets, the
 * `historyCount` history messages after it dropped, and every large tool result compacted (the
 * model reads again, in smaller pieces).
 */
function shrinkMessages(
  messages: ChatMessage[],
  historyCount: number,
  input: TurnInput,
  budgets: ContextBudgets,
): void {
  messages[0] = { role: "system", content: systemPrompt(input, budgets) };
  messages.splice(1, historyCount);
  compactOldToolResults(messages, messages.length);
}

/** Tool results larger than this are compacted once the model has moved past them. */
const COMPACT_TOOL_RESULT_BYTES = 1024;

/**
 * Replaces large tool results of earlier rounds with a short note. Every request resends the
 * whole conversation, so an outline read once would otherwise be paid for on every later step;
 * the model can call the tool again if it still needs the result.
 */
function compactOldToolResults(messages: ChatMessage[], before: number): void {
  for (let i = 0; i < before; i++) {
    const message = messages[i];
    if (message.role !== "tool" || typeof message.content !== "string") continue;
    if (message.content.length <= COMPACT_TOOL_RESULT_BYTES) continue;
    message.content = JSON.stringify({
      compacted: true,
      note: `an earlier tool result (${message.content.length} characters) was removed to keep the context small; call the tool again if you still need it`,
    });
  }
}

function scaledSteps(maxSteps: number, depth: TurnInput["thinkingDepth"]): number {
  const factor = depth === "fast" ? 0.5 : depth === "deep" ? 1.5 : 1;
  return Math.max(1, Math.ceil(maxSteps * factor));
}

// ---------------------------------------------------------------------------
// Prompt

const DEPTH_HINTS: Record<TurnInput["thinkingDepth"], string> = {
  fast: "Work quickly: read only what the request needs and make the minimal edits.",
  balanced: "Read enough context to edit correctly, then make the edits.",
  deep: "Work carefully: read the surrounding sections, plan the edits, and re-read edited chunks to check them.",
};

/**
 * How to end the turn, per response mode. A compact client gets the reply and the changed chunks,
 * never the document (interface spec, endpoint 1: a section asked for comes in the reply text).
 */
const REPLY_RULES: Record<NonNullable<TurnInput["responseMode"]>, string> = {
  full: "- Finish with a reply of one or two sentences saying what you changed. Do not paste the document.",
  compact:
    "- This client uses compact mode: it receives only your reply and the changed chunks, never the document. When the user asks to see, show, read or quote part of the document (a section, a clause, a table), read it with the tools and put its full content in your reply as plain text (headings as #, list items as -, table rows as cells separated by |). Otherwise finish with one or two sentences saying what you changed, without pasting the document.",
};

function systemPrompt(input: TurnInput, budgets: ContextBudgets): string {
  const doc = input.document;
  const lines = [
    "You are Redline's document editor. You change the user's HTML document only through the tools.",
    "The document is a list of chunks: block elements (h1-h6, p, ul, ol, table, blockquote, pre, div...) with chunk ids. Headings start sections.",
    "- Find and read before you edit (get_outline, search_text, read_chunks). Never invent chunk ids or guess content.",
    "- replace_chunk takes the complete new HTML of that one block. Keep its tag, attributes, inline styles and all markup you were not asked to change.",
    "- insert_after_chunk adds one or more new blocks after a chunk (after_chunk_id null = at the start). delete_chunk removes one chunk.",
    "- Give every edit a short, specific explanation. Change only what was asked; answer questions without editing.",
    '- A tool result {"error": ...} means nothing was applied: fix the call and retry, or tell the user.',
    REPLY_RULES[input.responseMode ?? "full"],
    DEPTH_HINTS[input.thinkingDepth],
    "",
    `Document title: ${JSON.stringify(input.documentTitle || "Untitled")}`,
  ];
  if (doc.isEmpty()) {
    lines.push("The document is empty. To write content, call insert_after_chunk with after_chunk_id null.");
  } else {
    const outline = doc.outline(80);
    const compact = outline.length <= INLINE_OUTLINE_MAX_CHUNKS ? formatOutline(outline) : "";
    if (compact !== "" && Buffer.byteLength(compact) <= budgets.inlineOutlineBytes) {
      lines.push(`Chunks: ${outline.length}. Outline (chunk id, tag or #-heading, preview):`, compact);
    } else {
      const headings = outline.filter((entry) => entry.level > 0).length;
      lines.push(
        `Chunks: ${outline.length} (${headings} headings): too large to show here. Call get_outline with headings_only true to see the sections, search_text to locate passages, then read_chunks for what you need.`,
      );
    }
  }
  if (input.cursor && (input.cursor.chunkId || input.cursor.selectedText)) {
    const parts: string[] = [];
    if (input.cursor.chunkId) parts.push(`in chunk ${input.cursor.chunkId}`);
    if (input.cursor.selectedText)
      parts.push(`with this text selected: ${JSON.stringify(input.cursor.selectedText.slice(0, 2000))}`);
    lines.push(`The user's cursor is ${parts.join(", ")}. "This", "here" or "the selection" refer to it.`);
  }
  if (input.memoryNote?.trim()) {
    lines.push(
      "",
      "Memory note about this user, kept across sessions (preferences and context):",
      input.memoryNote.trim(),
    );
  }
  return lines.join("\n");
}

function userContent(input: TurnInput): string | ContentPart[] {
  if (input.images.length === 0) return input.message;
  return [
    { type: "text", text: input.message },
    ...input.images.map(
      (image): ContentPart => ({
        type: "image_url",
        image_url: { url: `data:${image.mimeType};base64,${image.base64Data}` },
      }),
    ),
  ];
}
