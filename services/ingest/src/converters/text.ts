// Plain text → HTML: paragraphs on blank lines, line breaks kept inside a paragraph,
// and a conservative guess at chapter headings.
import { createHash } from "node:crypto";
import { InputError } from "@redline/service-kit";
import { baseTitle, type ConvertOptions, type ConvertResult } from "../formats.js";
import { collapseWhitespace, escapeHtml } from "../html/util.js";
import { chunkSourceBlocks, type SourceBlock } from "../sources/blocks.js";
import { decodeMapped } from "../sources/text-offsets.js";

const MAX_HEADING_CHARS = 60;
// "CHAPTER I.", "Chapter 12: The End", "BOOK IV", "Part 2"
const CHAPTER_LINE = /^(chapter|book|part|section|canto|act)\s+([ivxlcdm]+|\d+)\b[.:]?(\s.*)?$/i;
// A blank line (whitespace only) between paragraphs.
const PARAGRAPH_BREAK = /\n[ \t\f\v]*\n/g;

/** True for a one-line paragraph that reads as a heading: a chapter line or a short all-caps line. */
function looksLikeHeading(line: string): boolean {
  const text = line.trim();
  if (!text || text.length > MAX_HEADING_CHARS) return false;
  if (CHAPTER_LINE.test(text)) return true;
  const letters = text.match(/\p{L}/gu) ?? [];
  // All-caps, at least two words' worth of letters, no sentence punctuation at the end
  // (a shouted sentence like "STOP!" or "HELLO." is not a heading).
  return (
    letters.length >= 4 && text === text.toUpperCase() && text !== text.toLowerCase() && !/[.!?,;:]["')]?$/.test(text)
  );
}

/** The HTML of one paragraph of text (its lines), or null when it is blank. */
export function paragraphHtml(para: string): { html: string; heading: string | null } | null {
  const lines = para.split("\n").map((l) => l.replace(/\s+$/, ""));
  while (lines.length > 0 && lines[0].trim() === "") lines.shift();
  while (lines.length > 0 && lines[lines.length - 1].trim() === "") lines.pop();
  if (lines.length === 0) return null;
  if (lines.length === 1 && looksLikeHeading(lines[0])) {
    const heading = collapseWhitespace(lines[0]);
    return { html: `<h2>${escapeHtml(heading)}</h2>`, heading };
  }
  // Leading indentation marks a paragraph start in plain text; HTML shows its own.
  return { html: `<p>${lines.map((l) => escapeHtml(l.trim())).join("<br>")}</p>`, heading: null };
}

/**
 * Converts a plain text file (any common encoding: UTF-8 with or without BOM, UTF-16 with BOM,
 * else Windows-1252) to HTML: `<p>` per blank-line-separated paragraph, `<br>` for single
 * newlines, `<h2>` for chapter-like lines. Throws InputError when the bytes are binary.
 *
 * With `opts.keepSource`, each paragraph is mapped to its byte range in the original (from its
 * first non-blank character to its last; the blank lines between stay separators).
 */
export async function convertText(
  bytes: Uint8Array,
  filename: string,
  opts: ConvertOptions = {},
): Promise<ConvertResult> {
  const warnings: string[] = [];
  const mapped = decodeMapped(bytes, opts.keepSource === true);
  if (mapped.dropped > 0 && mapped.dropped > mapped.decoded.length * 0.1) {
    throw new InputError(
      "The .txt file does not look like text (it contains binary data); upload the original document instead",
    );
  }
  if (mapped.dropped > 0) warnings.push(`${mapped.dropped} control characters were removed`);
  if (!mapped.encoding.startsWith("utf")) warnings.push(`The text was decoded as ${mapped.encoding}`);

  const { text, byteAt } = mapped;
  const blocks: SourceBlock[] = [];
  let title: string | null = null;
  let start = 0;
  const take = (end: number) => {
    const para = text.slice(start, end);
    const made = paragraphHtml(para);
    if (made) {
      title ??= made.heading;
      const first = start + (para.length - para.trimStart().length);
      const last = start + para.trimEnd().length;
      const span = byteAt
        ? { kind: "bytes" as const, start: byteAt(first), end: byteAt(last) }
        : { kind: "bytes" as const, start: 0, end: 0 };
      blocks.push({ html: made.html, span });
    }
  };
  for (const m of text.matchAll(PARAGRAPH_BREAK)) {
    take(m.index);
    start = m.index + m[0].length;
  }
  take(text.length);
  const result = { title: title ?? baseTitle(filename), pageSetup: null, warnings, format: "txt" as const };
  if (!byteAt) return { ...result, html: blocks.map((b) => b.html).join("\n") };
  const seed = createHash("sha256").update(bytes).digest("hex");
  const { html, map } = chunkSourceBlocks(blocks, "txt", seed);
  return { ...result, html, source: { map } };
}
