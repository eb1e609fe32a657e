// Small HTML helpers shared by the converters.
import * as cheerio from "cheerio";

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes text for use in HTML content or a double-quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** Collapses whitespace runs to single spaces and trims. */
export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** Text of the first h1-h6 in an HTML fragment (whitespace collapsed), or null when none has text. */
export function firstHeadingText(html: string): string | null {
  const $ = cheerio.load(html, null, false);
  for (const el of $("h1, h2, h3, h4, h5, h6").toArray()) {
    const text = collapseWhitespace($(el).text());
    if (text) return text.slice(0, 500);
  }
  return null;
}

/**
 * Removes C0 control characters other than tab, newline, carriage return and form feed:
 * they are invalid in HTML and XML and only appear in text files by accident or as binary.
 * Returns the cleaned text and how many characters were dropped.
 */
export function stripControlChars(text: string): { text: string; dropped: number } {
  let dropped = 0;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  const cleaned = text.replace(/[\u0000-\u0008\u000b\u000e-\u001f\u007f]/g, () => {
    dropped++;
    return "";
  });
  return { text: cleaned, dropped };
}
