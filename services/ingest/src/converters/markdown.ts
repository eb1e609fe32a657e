// Markdown → HTML with marked (GFM: tables, strikethrough, task lists, autolinks).
import { Marked } from "marked";
import { baseTitle, type ConvertResult } from "../formats.js";
import { decodeText } from "./encoding.js";
import { firstHeadingText, stripControlChars } from "./html-util.js";

// A private instance: global marked.setOptions elsewhere in the process must not change ours.
const md = new Marked({ gfm: true, breaks: false, async: false });

/** Drops a leading YAML front-matter block ("---" ... "---"): metadata, not document text. */
function stripFrontMatter(text: string): { text: string; stripped: boolean } {
  const m = /^---[ \t]*\n[\s\S]*?\n(?:---|\.\.\.)[ \t]*(?:\n|$)/.exec(text);
  return m ? { text: text.slice(m[0].length), stripped: true } : { text, stripped: false };
}

/**
 * Converts a Markdown file (UTF-8, or another encoding per decodeText) to HTML with GitHub
 * flavoured extensions. Raw HTML blocks pass through unsanitized: the documents service
 * sanitizes on load. Title: the first heading, else the file name.
 */
export async function convertMarkdown(bytes: Uint8Array, filename: string): Promise<ConvertResult> {
  const warnings: string[] = [];
  const decoded = decodeText(bytes);
  const source = stripFrontMatter(stripControlChars(decoded.text).text.replace(/\r\n?/g, "\n"));
  if (source.stripped) warnings.push("The YAML front matter at the top of the file was not imported");
  const html = (md.parse(source.text) as string).trim();
  return { html, title: firstHeadingText(html) ?? baseTitle(filename), pageSetup: null, warnings, format: "md" };
}
