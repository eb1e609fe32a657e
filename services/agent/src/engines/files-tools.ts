// Attachments and templates for the engines: the session's attachments can be searched and
// quoted (Postgres full-text search in ingest), and a new document can be drafted from a
// template. The offline engine understands three instructions; the OpenAI engine gets two tools.
import { chunkHtml, type WorkingDocument } from "@redline/html-chunks";
import { MAX_PARSED_MESSAGE_CHARS } from "./offline-parse.js";
import { type FunctionTool, functionTool } from "./tool-schema.js";
import type { AttachmentPassage, TurnFiles, TurnInput } from "./types.js";

/** An offline instruction about files, or null when the message is not one. */
export type FilesInstruction =
  | { kind: "search-attachments"; query: string }
  | { kind: "quote-attachment"; name: string; query?: string }
  | { kind: "draft-from-template"; name: string };

// Linear: each pattern is anchored at the start, an argument cannot contain a quote, and the
// quantified parts next to each other (\s+ and a keyword, \s* and [.!]?) never match the same
// characters, so a failed match backtracks over each character a bounded number of times.
const QUOTED = `["“‘']([^"”’']+)["”’']`;
const SEARCH = new RegExp(`^(?:please\\s+)?search\\s+(?:the\\s+)?attachments?\\s+for\\s+${QUOTED}\\s*[.!]?$`, "i");
const QUOTE = new RegExp(
  `^(?:please\\s+)?quote\\s+(?:the\\s+)?attachment\\s+${QUOTED}(?:\\s+(?:about|on|for)\\s+${QUOTED})?\\s*[.!]?$`,
  "i",
);
const DRAFT = new RegExp(
  `^(?:please\\s+)?(?:draft|create|start)\\s+(?:a\\s+(?:new\\s+)?document\\s+)?from\\s+(?:the\\s+)?template\\s+${QUOTED}\\s*[.!]?$`,
  "i",
);

/** Parses `search attachments for "x"`, `quote attachment "name"` (optionally `about "x"`) and `draft from template "name"`. */
export function parseFilesInstruction(message: string): FilesInstruction | null {
  if (message.length > MAX_PARSED_MESSAGE_CHARS) return null;
  const text = message.trim();
  let m = SEARCH.exec(text);
  if (m) return { kind: "search-attachments", query: m[1] };
  m = QUOTE.exec(text);
  if (m) return { kind: "quote-attachment", name: m[1], ...(m[2] && { query: m[2] }) };
  m = DRAFT.exec(text);
  if (m) return { kind: "draft-from-template", name: m[1] };
  return null;
}

const QUOTE_PASSAGES = 3;
const SEARCH_PASSAGES = 5;
const PASSAGE_CHARS = 600;

const clip = (text: string) => (text.length > PASSAGE_CHARS ? `${text.slice(0, PASSAGE_CHARS)}…` : text);

function listPassages(passages: AttachmentPassage[]): string {
  return passages.map((p) => `- ${p.filename} (passage ${p.chunkIndex + 1}): “${clip(p.text)}”`).join("\n");
}

/**
 * Runs an offline files instruction. Search and quote answer in the reply and change nothing;
 * drafting from a template fills an empty document with the template's blocks.
 */
export async function runFilesInstruction(
  instruction: FilesInstruction,
  files: TurnFiles,
  document: WorkingDocument,
): Promise<{ reply: string; toolCalls: number }> {
  switch (instruction.kind) {
    case "search-attachments": {
      const passages = await files.searchAttachments(instruction.query, undefined, SEARCH_PASSAGES);
      if (passages.length === 0)
        return { reply: `No attachment of this session mentions “${instruction.query}”.`, toolCalls: 1 };
      return { reply: `Found in the attachments:\n${listPassages(passages)}`, toolCalls: 1 };
    }
    case "quote-attachment": {
      const passages = await files.searchAttachments(instruction.query ?? "", instruction.name, QUOTE_PASSAGES);
      if (passages.length === 0) {
        return {
          reply: instruction.query
            ? `The attachment “${instruction.name}” has no passage about “${instruction.query}” (or it is not processed yet).`
            : `No processed attachment named “${instruction.name}” in this session.`,
          toolCalls: 1,
        };
      }
      return { reply: `From ${passages[0].filename}:\n${listPassages(passages)}`, toolCalls: 1 };
    }
    case "draft-from-template": {
      if (!document.isEmpty())
        return {
          reply:
            "The document already has content, so I did not draft from the template; open a new tab (a blank document) and ask again.",
          toolCalls: 0,
        };
      const template = await files.getTemplate(instruction.name);
      if (!template) return { reply: `There is no template named “${instruction.name}”.`, toolCalls: 1 };
      const blocks = chunkHtml(template.html).chunks.map((c) => c.html);
      if (blocks.length === 0) return { reply: `The template “${template.name}” is empty.`, toolCalls: 1 };
      document.insertAfter(null, blocks.join("\n"), `Drafted from the template “${template.name}”`);
      return {
        reply: `Drafted a new document from the template “${template.name}” (${blocks.length} blocks). Edit it as you like.`,
        toolCalls: 2,
      };
    }
  }
}

const SEARCH_ATTACHMENTS_ARGS = {
  query: { type: "string", description: "Words to look for (web-search syntax: quotes, OR, -word)." },
  filename: { type: "string", description: "Only attachments whose file name contains this." },
};
const QUOTE_ATTACHMENT_ARGS = {
  filename: { type: "string", description: "The attachment's file name or part of it." },
  about: { type: "string", description: "Optional words the passages must contain." },
};

/** The OpenAI tool definitions for attachments (added when the turn has files). */
export const FILES_TOOLS: FunctionTool[] = [
  functionTool(
    "search_attachments",
    "Full-text search over the files attached to this session (contracts, reports, notes). Returns the best passages with their file names.",
    SEARCH_ATTACHMENTS_ARGS,
    ["query"],
  ),
  functionTool(
    "quote_attachment",
    "Reads passages of one attachment, by (part of) its file name, optionally only those about a topic, to quote them exactly.",
    QUOTE_ATTACHMENT_ARGS,
    ["filename"],
  ),
];

const FILES_TOOL_NAMES = new Set(FILES_TOOLS.map((t) => t.function.name));

/** True for the names in FILES_TOOLS. */
export function isFilesTool(name: string): boolean {
  return FILES_TOOL_NAMES.has(name);
}

/** Runs a files tool call; never throws (errors become `{"error"}` results for the model). */
export async function runFilesTool(
  files: TurnFiles,
  name: string,
  rawArguments: string,
  onProgress: TurnInput["onProgress"],
): Promise<{ content: string; edited: false }> {
  const result = (value: unknown) => ({ content: JSON.stringify(value), edited: false as const });
  let args: Record<string, unknown>;
  try {
    const parsed: unknown = rawArguments.trim() ? JSON.parse(rawArguments) : {};
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not an object");
    args = parsed as Record<string, unknown>;
  } catch {
    return result({ error: "arguments must be one JSON object" });
  }
  const str = (k: string) => (typeof args[k] === "string" ? (args[k] as string) : undefined);
  try {
    if (name === "search_attachments") {
      const query = str("query")?.trim();
      if (!query) return result({ error: '"query" must be a non-empty string' });
      onProgress?.(`Searching the attachments for ${JSON.stringify(query)}`);
      const passages = await files.searchAttachments(query, str("filename"), SEARCH_PASSAGES);
      return result({
        passages: passages.map((p) => ({ filename: p.filename, passage: p.chunkIndex + 1, text: clip(p.text) })),
      });
    }
    const filename = str("filename")?.trim();
    if (!filename) return result({ error: '"filename" must be a non-empty string' });
    onProgress?.(`Reading the attachment ${JSON.stringify(filename)}`);
    const passages = await files.searchAttachments(str("about") ?? "", filename, QUOTE_PASSAGES);
    return result({
      passages: passages.map((p) => ({ filename: p.filename, passage: p.chunkIndex + 1, text: p.text })),
    });
  } catch (err) {
    return result({ error: `the attachments could not be read (${err instanceof Error ? err.message : String(err)})` });
  }
}
