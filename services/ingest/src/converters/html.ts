// HTML/HTM → the body's content as block-structured HTML, decoded with the page's charset.
import { BLOCK_LEVEL_TAGS } from "@redline/html-chunks";
import * as cheerio from "cheerio";
import { baseTitle, type ConvertResult } from "../formats.js";
import { collapseWhitespace, firstHeadingText } from "../html/util.js";
import { decodeText } from "../text/encoding.js";

/** A DOM node as cheerio hands it out (domhandler's AnyNode, which is not our dependency). */
type AnyNode = Parameters<typeof cheerio.contains>[0];

// Elements that are never document content: code, styling, page plumbing, embedded apps.
const DROPPED = new Set(["script", "style", "noscript", "template", "link", "meta", "base", "title"]);
const EMBEDDED = new Set(["iframe", "frame", "frameset", "object", "embed", "applet"]);

/**
 * The charset a page declares in its first 4 KB (`<meta charset>` or the http-equiv
 * Content-Type form), read as ASCII because the label itself always is.
 */
export function sniffMetaCharset(bytes: Uint8Array): string | undefined {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 4096)).toString("latin1");
  for (const meta of head.match(/<meta\b[^>]*>/gi) ?? []) {
    const m = /charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(meta);
    if (m) return m[1];
  }
  return undefined;
}

/**
 * Converts an HTML or HTM page to the HTML of its `<body>`: scripts, styles, metadata and
 * embedded frames/objects are dropped, inline `style` attributes kept, and loose inline content
 * at the top level wrapped in `<p>`. Bytes are decoded per BOM, then the meta charset, then
 * UTF-8/Windows-1252 sniffing. Title: `<title>`, else the first heading, else the file name.
 */
export async function convertHtml(bytes: Uint8Array, filename: string): Promise<ConvertResult> {
  const warnings: string[] = [];
  const declared = sniffMetaCharset(bytes);
  const decoded = decodeText(bytes, { declared });
  if (declared && decoded.encoding !== declared.toLowerCase() && decoded.encoding !== "utf-8") {
    warnings.push(`The page declares charset ${declared}; it was decoded as ${decoded.encoding}`);
  }
  // Document mode (parse5, linear) so the page's <head> and <body> are where a browser puts them.
  const $ = cheerio.load(decoded.text);
  const pageTitle = collapseWhitespace($("head > title").first().text() || $("title").first().text());

  const body = $("body");
  // One walk finds what goes and the images: a selector list (`find("script, style")`) or
  // `.addBack()` sorts matches into document order by sibling index, quadratic on a page of
  // 100,000 paragraphs (minutes). Iterative, so a hostile nesting depth cannot overflow the
  // stack; nothing inside a dropped or embedded element is visited (it goes with it).
  const dropped: AnyNode[] = [];
  const embedded: AnyNode[] = [];
  // Comments carry nothing for the reader and may hide conditional markup.
  const comments: AnyNode[] = [];
  let relativeImages = 0;
  const pending: AnyNode[] = body.toArray().flatMap((b) => ("children" in b ? (b.children as AnyNode[]) : []));
  for (let node = pending.pop(); node; node = pending.pop()) {
    if (node.type === "comment") {
      comments.push(node);
      continue;
    }
    if (node.type !== "tag" && node.type !== "script" && node.type !== "style") continue;
    const el = node as AnyNode & { name: string; attribs: Record<string, string>; children: AnyNode[] };
    if (DROPPED.has(el.name)) dropped.push(el);
    else if (EMBEDDED.has(el.name)) embedded.push(el);
    else {
      if (el.name === "img") {
        const src = el.attribs.src ?? "";
        // Relative: no scheme and no host (`//cdn…` is remote); kept on the <img>, but nothing
        // next to the page was uploaded with it.
        if (src !== "" && !/^(?:[a-z][a-z0-9+.-]*:|\/\/)/i.test(src.trim())) relativeImages += 1;
      }
      for (const child of el.children) pending.push(child);
    }
  }
  $(dropped).remove();
  if (embedded.length > 0) warnings.push(`${embedded.length} embedded frames or objects were dropped`);
  $(embedded).remove();
  $(comments).remove();
  if (relativeImages > 0) {
    warnings.push(`${relativeImages} images point to files next to the page (relative URLs) and will not display`);
  }

  const html = wrapLooseInline($, body.contents().toArray());
  if (!html) warnings.push("The page has no body content");
  return {
    html,
    title: pageTitle || firstHeadingText(html) || baseTitle(filename),
    pageSetup: null,
    warnings,
    format: "html",
  };
}

/**
 * Serializes top-level nodes, grouping runs of text and inline elements into `<p>` so the
 * result is a sequence of blocks (the chunker splits on blocks: its BLOCK_LEVEL_TAGS decide here too).
 */
function wrapLooseInline($: cheerio.CheerioAPI, nodes: AnyNode[]): string {
  const out: string[] = [];
  let run: string[] = [];
  let runHasText = false;
  const flush = () => {
    if (runHasText) out.push(`<p>${run.join("").trim()}</p>`);
    run = [];
    runHasText = false;
  };
  for (const node of nodes) {
    if (node.type === "tag" && BLOCK_LEVEL_TAGS.has(node.name)) {
      flush();
      out.push($.html(node));
      continue;
    }
    const html = $.html(node);
    run.push(html);
    if (
      node.type === "text"
        ? node.data.trim() !== ""
        : node.type === "tag" && (node.name === "img" || $(node).text().trim() !== "")
    ) {
      runHasText = true;
    }
  }
  flush();
  return out.join("\n").trim();
}
