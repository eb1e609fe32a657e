// Plain text → HTML: paragraphs on blank lines, line breaks kept inside a paragraph,
// and a conservative guess at chapter headings.
import { InputError } from "@redline/service-kit";
import { baseTitle, type ConvertResult } from "../formats.js";
import { decodeText } from "./encoding.js";
import { collapseWhitespace, escapeHtml, stripControlChars } from "./html-util.js";

const MAX_HEADING_CHARS = 60;
// "CHAPTER I.", "Chapter 12: The End", "BOOK IV", "Part 2"
const CHAPTER_LINE = /^(chapter|book|part|section|canto|act)\s+([ivxlcdm]+|\d+)\b[.:]?(\s.*)?$/i;

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

/**
 * Converts a plain text file (any common encoding: UTF-8 with or without BOM, UTF-16 with BOM,
 * else Windows-1252) to HTML: `<p>` per blank-line-separated paragraph, `<br>` for single
 * newlines, `<h2>` for chapter-like lines. Throws InputError when the bytes are binary.
 */
export async function convertText(bytes: Uint8Array, filename: string): Promise<ConvertResult> {
  const warnings: string[] = [];
  const decoded = decodeText(bytes);
  const { text: clean, dropped } = stripControlChars(decoded.text);
  if (dropped > 0 && dropped > decoded.text.length * 0.1) {
    throw new InputError(
      "The .txt file does not look like text (it contains binary data); upload the original document instead",
    );
  }
  if (dropped > 0) warnings.push(`${dropped} control characters were removed`);
  if (!decoded.encoding.startsWith("utf")) warnings.push(`The text was decoded as ${decoded.encoding}`);

  const text = clean.replace(/\r\n?/g, "\n");
  const paragraphs = text.split(/\n[ \t\f\v]*\n/);
  const blocks: string[] = [];
  let title: string | null = null;
  for (const para of paragraphs) {
    const lines = para.split("\n").map((l) => l.replace(/\s+$/, ""));
    while (lines.length > 0 && lines[0].trim() === "") lines.shift();
    while (lines.length > 0 && lines[lines.length - 1].trim() === "") lines.pop();
    if (lines.length === 0) continue;
    if (lines.length === 1 && looksLikeHeading(lines[0])) {
      const heading = collapseWhitespace(lines[0]);
      title ??= heading;
      blocks.push(`<h2>${escapeHtml(heading)}</h2>`);
      continue;
    }
    // Leading indentation marks a paragraph start in plain text; HTML shows its own.
    blocks.push(`<p>${lines.map((l) => escapeHtml(l.trim())).join("<br>")}</p>`);
  }
  return { html: blocks.join("\n"), title: title ?? baseTitle(filename), pageSetup: null, warnings, format: "txt" };
}
