// The OpenAI-compatible engine: a streamed tool-calling loop in which the model reads the
// document through tools (outline, read, search) and edits it chunk by chunk. The document
// is never sent whole; the model pulls what it needs, so a turn costs roughly what it reads.
import { type OutlineEntry, sectionSpan, ToolError, type WorkingDocument } from "@redline/html-chunks";
import { UnavailableError } from "@redline/service-kit";
import { APIError, OpenAI } from "openai";
import { FILES_TOOLS, isFilesTool, runFilesTool } from "./files-tools.js";
import { functionTool } from "./tool-schema.js";
import type { Engine, TurnInput, TurnOutput } from "./types.js";

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ChatTool = OpenAI.Chat.Completions.ChatCompletionFunctionTool;
type ContentPart = OpenAI.Chat.Completions.ChatCompletionContentPart;

/** Where the engine finds an OpenAI-compatible chat completions API and how hard it tries. */
export interface OpenAiEngineConfig {
  /** Base URL including the version path, e.g. `https://api.openai.com/v1`. */
  baseURL: string;
  apiKey: string;
  /** Model name per chat `model_tier`. */
  models: Record<"core" | "turbo" | "pro" | "max", string>;
  /** Cap on one model request, from send to the end of its stream, in milliseconds. */
  requestTimeoutMs: number;
  /** Tool-call rounds per turn at `balanced` depth (fast: half, deep: 1.5x), e.g. 24. */
  maxSteps: number;
  /** SDK retries on connection errors, 408/409/429 and 5xx; default 1. */
  maxRetries?: number;
}

// Tool result caps. The model sees these numbers in the results and can page.
const READ_BUDGET_BYTES = 20_000;
const SINGLE_CHUNK_MAX_BYTES = 64_000;
const OUTLINE_BUDGET_BYTES = 24_000;
const SEARCH_LIMIT = 20;
// A document whose outline fits these caps gets it in the system prompt, saving a round.
const INLINE_OUTLINE_MAX_CHUNKS = 150;
const INLINE_OUTLINE_MAX_BYTES = 8_000;
const SMALL_DOC_CHUNKS = 300;

/**
 * Creates the engine for an OpenAI-compatible provider. `runTurn` rejects with the
 * signal's reason when `input.signal` aborts, and with UnavailableError when the provider
 * fails (HTTP 4xx/5xx after SDK retries, connection errors, or no complete response within
 * `requestTimeoutMs`). Tool errors never reject: they go back to the model as `{"error"}`.
 */
export function createOpenAiEngine(cfg: OpenAiEngineConfig): Engine {
  const client = new OpenAI({
    baseURL: cfg.baseURL,
    // Local OpenAI-compatible servers often need no key; the SDK refuses an empty one.
    apiKey: cfg.apiKey || "unused",
    organization: null,
    project: null,
    maxRetries: cfg.maxRetries ?? 1,
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
  const messages: ChatMessage[] = [{ role: "system", content: systemPrompt(input) }];
  for (const turn of input.history) {
    if (turn.content.trim() === "") continue;
    messages.push(
      turn.sender === "user" ? { role: "user", content: turn.content } : { role: "assistant", content: turn.content },
    );
  }
  messages.push({ role: "user", content: userContent(input) });

  const maxSteps = scaledSteps(cfg.maxSteps, input.thinkingDepth);
  const model = cfg.models[input.modelTier];
  // Tool schemas ride along on every request: offer the attachment tools only when they can find something.
  const tools: ChatTool[] = input.files && input.files.attachmentCount > 0 ? [...TOOLS, ...FILES_TOOLS] : TOOLS;
  const toolsBytes = Buffer.byteLength(JSON.stringify(tools));
  let bytesSentToModel = 0;
  let toolCalls = 0;
  let edits = 0;

  // Index of the first tool message of the latest round: results before it get compacted.
  let latestRound = messages.length;
  for (let step = 0; step < maxSteps; step++) {
    input.signal.throwIfAborted();
    compactOldToolResults(messages, latestRound);
    bytesSentToModel += Buffer.byteLength(JSON.stringify(messages)) + toolsBytes;
    const answer = await complete(client, cfg, model, messages, input.signal, tools);
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
          : runTool(doc, call.name, call.arguments, input.onProgress);
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
// One streamed model request

interface ModelAnswer {
  content: string;
  toolCalls: { id: string; name: string; arguments: string }[];
}

/**
 * Sends one streamed chat completion and gathers its text and tool calls. Tool-call
 * arguments arrive as fragments keyed by `index`, so they are concatenated per index.
 * The whole request, stream included, is bounded by `requestTimeoutMs`: the SDK's own
 * timeout stops at the response headers, which a stalled stream has already sent.
 */
async function complete(
  client: OpenAI,
  cfg: OpenAiEngineConfig,
  model: string,
  messages: ChatMessage[],
  signal: AbortSignal,
  tools: ChatTool[] = TOOLS,
): Promise<ModelAnswer> {
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = (): void => controller.abort(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, cfg.requestTimeoutMs);
  try {
    const stream = await client.chat.completions.create(
      { model, messages, tools, tool_choice: "auto", stream: true },
      { signal: controller.signal },
    );
    let content = "";
    const calls: { id: string; name: string; arguments: string }[] = [];
    for await (const chunk of stream) {
      const delta = chunk.choices?.[0]?.delta;
      if (!delta) continue;
      if (typeof delta.content === "string") content += delta.content;
      for (const fragment of delta.tool_calls ?? []) {
        // Without an index (some compatible servers), a new id starts a call and anything else continues the last one.
        const last = calls[calls.length - 1];
        const index =
          typeof fragment.index === "number"
            ? fragment.index
            : (fragment.id && fragment.id !== last?.id) || last === undefined
              ? calls.length
              : calls.length - 1;
        calls[index] ??= { id: "", name: "", arguments: "" };
        const slot = calls[index];
        if (fragment.id) slot.id = fragment.id;
        const name = fragment.function?.name;
        // OpenAI sends the name once; some compatible servers repeat it on every fragment.
        if (name) slot.name = slot.name === "" || slot.name === name ? name : slot.name + name;
        if (fragment.function?.arguments) slot.arguments += fragment.function.arguments;
      }
    }
    // The SDK's stream iterator ends quietly when aborted instead of throwing, so a cut
    // stream would otherwise pass for a complete (empty) answer.
    if (controller.signal.aborted) throw controller.signal.reason;
    return { content, toolCalls: calls.filter((call) => call !== undefined) };
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    if (timedOut) {
      throw new UnavailableError(`model provider unavailable: no complete response within ${cfg.requestTimeoutMs} ms`);
    }
    if (err instanceof APIError) throw new UnavailableError(`model provider unavailable: ${err.message}`);
    throw new UnavailableError(`model provider unavailable: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
  }
}

// ---------------------------------------------------------------------------
// Prompt

const DEPTH_HINTS: Record<TurnInput["thinkingDepth"], string> = {
  fast: "Work quickly: read only what the request needs and make the minimal edits.",
  balanced: "Read enough context to edit correctly, then make the edits.",
  deep: "Work carefully: read the surrounding sections, plan the edits, and re-read edited chunks to check them.",
};

function systemPrompt(input: TurnInput): string {
  const doc = input.document;
  const lines = [
    "You are Redline's document editor. You change the user's HTML document only through the tools.",
    "The document is a list of chunks: block elements (h1-h6, p, ul, ol, table, blockquote, pre, div...) with chunk ids. Headings start sections.",
    "- Find and read before you edit (get_outline, search_text, read_chunks). Never invent chunk ids or guess content.",
    "- replace_chunk takes the complete new HTML of that one block. Keep its tag, attributes, inline styles and all markup you were not asked to change.",
    "- insert_after_chunk adds one or more new blocks after a chunk (after_chunk_id null = at the start). delete_chunk removes one chunk.",
    "- Give every edit a short, specific explanation. Change only what was asked; answer questions without editing.",
    '- A tool result {"error": ...} means nothing was applied: fix the call and retry, or tell the user.',
    "- Finish with a reply of one or two sentences saying what you changed. Do not paste the document.",
    DEPTH_HINTS[input.thinkingDepth],
    "",
    `Document title: ${JSON.stringify(input.documentTitle || "Untitled")}`,
  ];
  if (doc.isEmpty()) {
    lines.push("The document is empty. To write content, call insert_after_chunk with after_chunk_id null.");
  } else {
    const outline = doc.outline(80);
    const compact = outline.length <= INLINE_OUTLINE_MAX_CHUNKS ? formatOutline(outline) : "";
    if (compact !== "" && Buffer.byteLength(compact) <= INLINE_OUTLINE_MAX_BYTES) {
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

/** One line per chunk: `id ## Heading` for headings, `id tag: preview` otherwise. */
function formatOutlineLine(entry: OutlineEntry): string {
  return entry.level > 0
    ? `${entry.chunkId} ${"#".repeat(entry.level)} ${entry.preview}`
    : `${entry.chunkId} ${entry.tag}: ${entry.preview}`;
}

function formatOutline(outline: OutlineEntry[]): string {
  return outline.map(formatOutlineLine).join("\n");
}

// ---------------------------------------------------------------------------
// Tools

/** The explanation argument of every editing tool. */
const EXPLANATION = { type: "string", description: "Short, specific reason shown to the user." };

const TOOLS: ChatTool[] = [
  functionTool(
    "get_outline",
    "List the document's chunks in order: chunk id, tag (headings as #..######) and a short text preview. Large documents are paged: pass next_from_chunk_id back as from_chunk_id. headings_only lists just the section headings with their sizes.",
    {
      headings_only: { type: "boolean", description: "List only headings, each with its section's chunk count." },
      from_chunk_id: { type: "string", description: "Start the listing at this chunk (for paging)." },
    },
  ),
  functionTool(
    "read_chunks",
    `Return the full HTML of the given chunks, in the order asked. About ${READ_BUDGET_BYTES / 1000} KB per call; the result says which ids were left out.`,
    { chunk_ids: { type: "array", items: { type: "string" }, minItems: 1 } },
    ["chunk_ids"],
  ),
  functionTool(
    "search_text",
    `Find chunks whose text contains the query (case-insensitive). Returns up to ${SEARCH_LIMIT} chunk ids with snippets.`,
    { query: { type: "string" } },
    ["query"],
  ),
  functionTool(
    "replace_chunk",
    "Replace one chunk with new HTML: exactly one block element, complete (tag, attributes, styles).",
    { chunk_id: { type: "string" }, html: { type: "string" }, explanation: EXPLANATION },
    ["chunk_id", "html", "explanation"],
  ),
  functionTool(
    "insert_after_chunk",
    "Insert one or more new block elements after a chunk; after_chunk_id null inserts at the start.",
    { after_chunk_id: { type: ["string", "null"] }, html: { type: "string" }, explanation: EXPLANATION },
    ["after_chunk_id", "html", "explanation"],
  ),
  functionTool("delete_chunk", "Delete one chunk.", { chunk_id: { type: "string" }, explanation: EXPLANATION }, [
    "chunk_id",
    "explanation",
  ]),
];

/** The tool schemas sent with every request (exported for tests and docs). */
export const OPENAI_ENGINE_TOOLS: readonly ChatTool[] = TOOLS;

interface ToolResult {
  content: string;
  edited: boolean;
}

/** An argument problem the model can fix; becomes `{"error": message}`. */
class ArgumentError extends Error {}

function ok(value: Record<string, unknown>, edited = false): ToolResult {
  return { content: JSON.stringify(value), edited };
}

function fail(message: string): ToolResult {
  return { content: JSON.stringify({ error: message }), edited: false };
}

function stringArg(args: Record<string, unknown>, key: string, required = true): string | undefined {
  const value = args[key];
  if (value === undefined || value === null) {
    if (required) throw new ArgumentError(`missing required argument "${key}" (string)`);
    return undefined;
  }
  if (typeof value !== "string") throw new ArgumentError(`argument "${key}" must be a string`);
  return value;
}

function explanationArg(args: Record<string, unknown>, fallback: string): string {
  const value = stringArg(args, "explanation", false)?.trim();
  return value ? value.slice(0, 500) : fallback;
}

/**
 * Runs one tool call against the document. Never throws: unknown tools, malformed JSON,
 * bad arguments and ToolErrors (unknown chunk, malformed HTML...) become `{"error"}` results,
 * and a failed edit leaves the document unchanged (WorkingDocument's guarantee).
 */
function runTool(
  doc: WorkingDocument,
  name: string,
  rawArguments: string,
  onProgress: TurnInput["onProgress"],
): ToolResult {
  let parsed: unknown;
  try {
    parsed = rawArguments.trim() === "" ? {} : JSON.parse(rawArguments);
  } catch (err) {
    return fail(
      `arguments are not valid JSON (${err instanceof Error ? err.message : "parse error"}); send one JSON object`,
    );
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return fail("arguments must be a JSON object");
  }
  const args = parsed as Record<string, unknown>;
  try {
    switch (name) {
      case "get_outline": {
        const headingsOnly = args.headings_only === true;
        onProgress?.(headingsOnly ? "Reading the section list" : "Reading the outline");
        return ok(outlinePage(doc, headingsOnly, stringArg(args, "from_chunk_id", false)));
      }
      case "read_chunks": {
        const ids = args.chunk_ids;
        if (!Array.isArray(ids) || ids.length === 0 || !ids.every((id): id is string => typeof id === "string")) {
          throw new ArgumentError('"chunk_ids" must be a non-empty array of chunk id strings');
        }
        onProgress?.(`Reading ${ids.length} chunk${ids.length === 1 ? "" : "s"}`);
        return ok(readChunks(doc, ids));
      }
      case "search_text": {
        const query = stringArg(args, "query") ?? "";
        if (query.trim() === "") throw new ArgumentError('"query" must not be empty');
        onProgress?.(`Searching for ${JSON.stringify(query)}`);
        const matches = doc.search(query, { limit: SEARCH_LIMIT });
        return ok({
          matches: matches.map((match) => ({ chunk_id: match.chunkId, snippet: match.snippet })),
          ...(matches.length === 0 ? { note: "no chunk contains that text" } : {}),
        });
      }
      case "replace_chunk": {
        const chunkId = stringArg(args, "chunk_id") ?? "";
        const html = stringArg(args, "html") ?? "";
        onProgress?.(`Editing chunk ${chunkId}`);
        doc.replace(chunkId, html, explanationArg(args, "Edited by the assistant"));
        return ok({ ok: true, chunk_id: chunkId }, true);
      }
      case "insert_after_chunk": {
        const after = args.after_chunk_id;
        if (after !== null && after !== undefined && typeof after !== "string") {
          throw new ArgumentError('"after_chunk_id" must be a chunk id string or null');
        }
        const html = stringArg(args, "html") ?? "";
        onProgress?.(after ? `Inserting after chunk ${after}` : "Inserting at the start");
        const inserted = doc.insertAfter(after ?? null, html, explanationArg(args, "Added by the assistant"));
        return ok({ ok: true, inserted_chunk_ids: inserted.map((chunk) => chunk.chunkId) }, true);
      }
      case "delete_chunk": {
        const chunkId = stringArg(args, "chunk_id") ?? "";
        onProgress?.(`Deleting chunk ${chunkId}`);
        doc.delete(chunkId, explanationArg(args, "Deleted by the assistant"));
        return ok({ ok: true, deleted_chunk_id: chunkId }, true);
      }
      default:
        return fail(`unknown tool "${name}"; available: ${TOOLS.map((tool) => tool.function.name).join(", ")}`);
    }
  } catch (err) {
    if (err instanceof ArgumentError || err instanceof ToolError) return fail(err.message);
    // Anything else is a bug in the chunk layer; the model still gets a fixable answer
    // rather than the turn failing, and nothing was applied.
    return fail(`the tool failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * One page of the outline, at most OUTLINE_BUDGET_BYTES of lines. Previews shrink for
 * large documents so most of them fit on a page or two; every chunk is listed on some page.
 */
function outlinePage(doc: WorkingDocument, headingsOnly: boolean, fromChunkId?: string): Record<string, unknown> {
  const full = doc.outline(80);
  const total = full.length;
  // Headings keep 80 chars (they are how the model navigates); other previews shrink on big documents.
  const short = total <= SMALL_DOC_CHUNKS ? full : doc.outline(32);
  let outline = full.map((entry, i) => (entry.level > 0 ? entry : short[i]));
  if (headingsOnly) {
    const chunks = doc.chunks();
    outline = outline.filter((entry) => entry.level > 0);
    const sizes = new Map(outline.map((entry) => [entry.chunkId, sectionSpan(chunks, entry.chunkId).length]));
    return pageOf(
      outline,
      fromChunkId,
      total,
      (entry) => `${formatOutlineLine(entry)} (${sizes.get(entry.chunkId)} chunks)`,
    );
  }
  return pageOf(outline, fromChunkId, total, formatOutlineLine);
}

function pageOf(
  entries: OutlineEntry[],
  fromChunkId: string | undefined,
  total: number,
  line: (entry: OutlineEntry) => string,
): Record<string, unknown> {
  let start = 0;
  if (fromChunkId !== undefined && fromChunkId !== "") {
    start = entries.findIndex((entry) => entry.chunkId === fromChunkId);
    if (start < 0) throw new ArgumentError(`from_chunk_id "${fromChunkId}" is not in this listing`);
  }
  const lines: string[] = [];
  let bytes = 0;
  let i = start;
  for (; i < entries.length; i++) {
    const text = line(entries[i]);
    bytes += Buffer.byteLength(text) + 1;
    if (bytes > OUTLINE_BUDGET_BYTES && lines.length > 0) break;
    lines.push(text);
  }
  const page: Record<string, unknown> = { chunk_count: total, outline: lines.join("\n") };
  if (i < entries.length) {
    page.next_from_chunk_id = entries[i].chunkId;
    page.note = `listed ${lines.length} of ${entries.length - start} remaining entries; call get_outline with from_chunk_id ${JSON.stringify(entries[i].chunkId)} for more, or use search_text`;
  }
  return page;
}

function readChunks(doc: WorkingDocument, ids: string[]): Record<string, unknown> {
  const unique = [...new Set(ids)];
  const unknown = unique.filter((id) => !doc.has(id));
  const known = unique.filter((id) => doc.has(id));
  if (known.length === 0)
    throw new ArgumentError(`no such chunk id: ${unknown.join(", ")}; call get_outline or search_text for ids`);
  const chunks: Record<string, unknown>[] = [];
  const leftOut: string[] = [];
  let bytes = 0;
  for (const chunk of doc.read(known)) {
    const size = Buffer.byteLength(chunk.html);
    if (chunks.length === 0 && size > SINGLE_CHUNK_MAX_BYTES) {
      // A chunk this big cannot be shown whole; say so, so the model does not replace it with the cut copy.
      chunks.push({
        chunk_id: chunk.chunkId,
        html: chunk.html.slice(0, SINGLE_CHUNK_MAX_BYTES),
        warning: `cut at ${SINGLE_CHUNK_MAX_BYTES} of ${size} bytes: do not replace this chunk with the cut copy`,
      });
      bytes += SINGLE_CHUNK_MAX_BYTES;
      continue;
    }
    // Once one chunk is left out, so is every later one: the model gets a prefix and reads on from the first id listed.
    if (leftOut.length > 0 || (chunks.length > 0 && bytes + size > READ_BUDGET_BYTES)) {
      leftOut.push(chunk.chunkId);
      continue;
    }
    chunks.push({ chunk_id: chunk.chunkId, html: chunk.html });
    bytes += size;
  }
  const result: Record<string, unknown> = { chunks };
  if (unknown.length > 0) result.unknown_chunk_ids = unknown;
  if (leftOut.length > 0) {
    result.truncated = `size cap of ${READ_BUDGET_BYTES} bytes reached; not returned: ${leftOut.join(", ")}. Read them in another call.`;
  }
  return result;
}
