// The OpenAI engine's tools: the schemas the model sees and the code that runs each call against
// the WorkingDocument. Results are capped by the turn's ContextBudgets; the model sees the caps in
// the results and can page.
import { type OutlineEntry, sectionSpan, ToolError, type WorkingDocument } from "@redline/html-chunks";
import type { OpenAI } from "openai";
import { parseToolArguments } from "./openai-arguments.js";
import { type ContextBudgets, DEFAULT_BUDGETS } from "./openai-context.js";
import { functionTool } from "./tool-schema.js";
import type { TurnInput } from "./types.js";

type ChatTool = OpenAI.Chat.Completions.ChatCompletionFunctionTool;

const SEARCH_LIMIT = 20;
/** Above this many chunks, outline previews shrink so most documents list in a page or two. */
const SMALL_DOC_CHUNKS = 300;

/** One line per chunk: `id ## Heading` for headings, `id tag: preview` otherwise. */
export function formatOutlineLine(entry: OutlineEntry): string {
  return entry.level > 0
    ? `${entry.chunkId} ${"#".repeat(entry.level)} ${entry.preview}`
    : `${entry.chunkId} ${entry.tag}: ${entry.preview}`;
}

/** The outline as formatOutlineLine lines, one per chunk. */
export function formatOutline(outline: OutlineEntry[]): string {
  return outline.map(formatOutlineLine).join("\n");
}

/** The explanation argument of every editing tool. */
const EXPLANATION = { type: "string", description: "Short, specific reason shown to the user." };

/** The tool schemas for a turn with these budgets (read_chunks states its cap). */
export function toolSchemas(budgets: ContextBudgets = DEFAULT_BUDGETS): ChatTool[] {
  return [
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
      `Return the full HTML of the given chunks, in the order asked. About ${Math.max(1, Math.round(budgets.readBytes / 1000))} KB per call; the result says which ids were left out.`,
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
}

/** The tool schemas sent with every request at the default budgets (exported for tests and docs). */
export const OPENAI_ENGINE_TOOLS: readonly ChatTool[] = toolSchemas();

/** The names of the document tools. */
export const DOCUMENT_TOOL_NAMES: readonly string[] = OPENAI_ENGINE_TOOLS.map((tool) => tool.function.name);

/** A tool call's result text (JSON) and whether it changed the document. */
export interface ToolResult {
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
 * Runs one tool call against the document. Never throws: unknown tools, malformed JSON (after
 * one repair, parseToolArguments),
 * bad arguments and ToolErrors (unknown chunk, malformed HTML...) become `{"error"}` results,
 * and a failed edit leaves the document unchanged (WorkingDocument's guarantee).
 */
export function runTool(
  doc: WorkingDocument,
  name: string,
  rawArguments: string,
  onProgress: TurnInput["onProgress"],
  budgets: ContextBudgets = DEFAULT_BUDGETS,
): ToolResult {
  const parsed = parseToolArguments(rawArguments);
  if (!parsed.ok) return fail(parsed.error);
  const args = parsed.args;
  try {
    switch (name) {
      case "get_outline": {
        const headingsOnly = args.headings_only === true;
        onProgress?.(headingsOnly ? "Reading the section list" : "Reading the outline");
        return ok(outlinePage(doc, headingsOnly, budgets.outlineBytes, stringArg(args, "from_chunk_id", false)));
      }
      case "read_chunks": {
        const ids = args.chunk_ids;
        if (!Array.isArray(ids) || ids.length === 0 || !ids.every((id): id is string => typeof id === "string")) {
          throw new ArgumentError('"chunk_ids" must be a non-empty array of chunk id strings');
        }
        onProgress?.(`Reading ${ids.length} chunk${ids.length === 1 ? "" : "s"}`);
        return ok(readChunks(doc, ids, budgets));
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
        return fail(`unknown tool "${name}"; available: ${DOCUMENT_TOOL_NAMES.join(", ")}`);
    }
  } catch (err) {
    if (err instanceof ArgumentError || err instanceof ToolError) return fail(err.message);
    // Anything else is a bug in the chunk layer; the model still gets a fixable answer
    // rather than the turn failing, and nothing was applied.
    return fail(`the tool failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * One page of the outline, at most `maxBytes` of lines. Previews shrink for
 * large documents so most of them fit on a page or two; every chunk is listed on some page.
 */
function outlinePage(
  doc: WorkingDocument,
  headingsOnly: boolean,
  maxBytes: number,
  fromChunkId?: string,
): Record<string, unknown> {
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
      maxBytes,
    );
  }
  return pageOf(outline, fromChunkId, total, formatOutlineLine, maxBytes);
}

function pageOf(
  entries: OutlineEntry[],
  fromChunkId: string | undefined,
  total: number,
  line: (entry: OutlineEntry) => string,
  maxBytes: number,
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
    if (bytes > maxBytes && lines.length > 0) break;
    lines.push(text);
  }
  const page: Record<string, unknown> = { chunk_count: total, outline: lines.join("\n") };
  if (i < entries.length) {
    page.next_from_chunk_id = entries[i].chunkId;
    page.note = `listed ${lines.length} of ${entries.length - start} remaining entries; call get_outline with from_chunk_id ${JSON.stringify(entries[i].chunkId)} for more, or use search_text`;
  }
  return page;
}

function readChunks(doc: WorkingDocument, ids: string[], budgets: ContextBudgets): Record<string, unknown> {
  const { readBytes, singleChunkMaxBytes } = budgets;
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
    if (chunks.length === 0 && size > singleChunkMaxBytes) {
      // A chunk this big cannot be shown whole; say so, so the model does not replace it with the cut copy.
      chunks.push({
        chunk_id: chunk.chunkId,
        html: chunk.html.slice(0, singleChunkMaxBytes),
        warning: `cut at ${singleChunkMaxBytes} of ${size} bytes: do not replace this chunk with the cut copy`,
      });
      bytes += singleChunkMaxBytes;
      continue;
    }
    // Once one chunk is left out, so is every later one: the model gets a prefix and reads on from the first id listed.
    if (leftOut.length > 0 || (chunks.length > 0 && bytes + size > readBytes)) {
      leftOut.push(chunk.chunkId);
      continue;
    }
    chunks.push({ chunk_id: chunk.chunkId, html: chunk.html });
    bytes += size;
  }
  const result: Record<string, unknown> = { chunks };
  if (unknown.length > 0) result.unknown_chunk_ids = unknown;
  if (leftOut.length > 0) {
    result.truncated = `size cap of ${readBytes} bytes reached; not returned: ${leftOut.join(", ")}. Read them in another call.`;
  }
  return result;
}
