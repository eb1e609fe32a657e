// Markdown → HTML with marked (GFM: tables, strikethrough, task lists, autolinks).
import { createHash } from "node:crypto";
import { Marked, type Token } from "marked";
import { baseTitle, type ConvertOptions, type ConvertResult } from "../formats.js";
import { firstHeadingText } from "../html/util.js";
import { chunkSourceBlocks, type SourceBlock } from "../sources/blocks.js";
import { decodeMapped } from "../sources/text-offsets.js";

/**
 * A link destination or title as an attribute value: `&`, `<`, `>` and `"` escaped, entities
 * the source wrote kept (as marked reads them), nothing else changed.
 */
const attribute = (text: string) =>
  text
    .replace(/&(?!#?\w+;)/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");

// A private instance: global marked.setOptions elsewhere in the process must not change ours.
// Links and images keep their destinations as the file writes them (CommonMark's backslash
// escapes resolved): marked's own renderer runs them through encodeURI, which rewrites every
// space and non-ASCII character of a path or fragment, so an export no longer matches the file.
const md = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: {
    link({ href, title, tokens }) {
      const titled = title ? ` title="${attribute(title)}"` : "";
      return `<a href="${attribute(href)}"${titled}>${this.parser.parseInline(tokens)}</a>`;
    },
    image({ href, title, text, tokens }) {
      const alt = tokens ? this.parser.parseInline(tokens, this.parser.textRenderer) : text;
      const titled = title ? ` title="${attribute(title)}"` : "";
      return `<img src="${attribute(href)}" alt="${attribute(alt)}"${titled}>`;
    },
  },
});

/** Length of a leading YAML front-matter block ("---" ... "---"): metadata, not document text. */
function frontMatterLength(text: string): number {
  const m = /^---[ \t]*\n[\s\S]*?\n(?:---|\.\.\.)[ \t]*(?:\n|$)/.exec(text);
  return m ? m[0].length : 0;
}

/**
 * Converts a Markdown file (UTF-8, or another encoding per decodeText) to HTML with GitHub
 * flavoured extensions. Raw HTML blocks pass through unsanitized: the documents service
 * sanitizes on load. Title: the first heading, else the file name.
 *
 * With `opts.keepSource`, each top-level block (marked's tokens, whose raw text tiles the file)
 * becomes its chunk(s) with ids, mapped to the block's byte range in the original (trailing
 * blank lines excluded); a file whose decoding does not round-trip gets no map.
 */
export async function convertMarkdown(
  bytes: Uint8Array,
  filename: string,
  opts: ConvertOptions = {},
): Promise<ConvertResult> {
  const warnings: string[] = [];
  const mapped = decodeMapped(bytes, opts.keepSource === true);
  const skip = frontMatterLength(mapped.text);
  if (skip > 0) warnings.push("The YAML front matter at the top of the file was not imported");
  const text = mapped.text.slice(skip);
  const byteAt = mapped.byteAt;
  if (!byteAt) {
    const html = (md.parse(text) as string).trim();
    return { html, title: firstHeadingText(html) ?? baseTitle(filename), pageSetup: null, warnings, format: "md" };
  }
  const tokens = md.lexer(text);
  const blocks: SourceBlock[] = [];
  let at = skip;
  for (const token of tokens) {
    const start = at;
    at += token.raw.length;
    if (token.type === "space" || token.type === "def") continue;
    const raw = token.raw;
    const lead = raw.length - raw.replace(/^\n+/, "").length;
    const body = raw.replace(/\s+$/, "");
    if (body.length <= lead) continue;
    const span = { kind: "bytes" as const, start: byteAt(start + lead), end: byteAt(start + body.length) };
    blocks.push({ html: renderToken(token, tokens.links), span });
  }
  const seed = createHash("sha256").update(bytes).digest("hex");
  const { html, map } = chunkSourceBlocks(blocks, "markdown", seed);
  return {
    html,
    title: firstHeadingText(html) ?? baseTitle(filename),
    pageSetup: null,
    warnings,
    format: "md",
    source: { map },
  };
}

/** One top-level token's HTML (reference links resolve against the whole file's definitions). */
function renderToken(token: Token, links: ReturnType<typeof md.lexer>["links"]): string {
  const list = Object.assign([token], { links });
  return md.parser(list) as string;
}
