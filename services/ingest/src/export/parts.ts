// Out-of-flow parts of a document. Converters mark headers, footers and comments as their own
// chunks with `data-part="header" | "footer" | "comment"` (footnotes and endnotes stay in the
// flow, as the notes list at the end, marked `data-part="footnote" | "endnote"`); exporters put
// them back where each format keeps them (docx headers/footers, a notes list elsewhere).
import { findAll, loadHtml } from "../html/util.js";

/** The document split into its flow and its out-of-flow parts (each an HTML fragment). */
export interface DocumentParts {
  /** Everything in reading order except headers, footers and comments. */
  body: string;
  headers: string[];
  footers: string[];
  comments: string[];
}

/** Splits `html` by `data-part`; elements without the attribute stay in the body. */
export function splitParts(html: string): DocumentParts {
  const $ = loadHtml(html);
  const root = $.root()[0];
  const take = (part: string): string[] => {
    const found = findAll(root, (el) => el.attribs["data-part"] === part);
    const out = found.map((el) => $.html(el));
    $(found).remove();
    return out;
  };
  const headers = take("header");
  const footers = take("footer");
  const comments = take("comment");
  return { body: $.html(), headers, footers, comments };
}

/** The `src` of every `<img>` in `html`, deduplicated. */
export function imageSources(html: string): string[] {
  const $ = loadHtml(html);
  const out = new Set<string>();
  for (const el of findAll($.root()[0], (e) => e.name === "img")) if (el.attribs.src) out.add(el.attribs.src);
  return [...out];
}

/** Rewrites every `<img src>` through `map` (unmapped sources are left as they are). */
export function rewriteImageSources(html: string, map: ReadonlyMap<string, string>): string {
  if (map.size === 0) return html;
  const $ = loadHtml(html);
  for (const el of findAll($.root()[0], (e) => e.name === "img" && e.attribs.src !== undefined)) {
    const next = map.get(el.attribs.src);
    if (next !== undefined) $(el).attr("src", next);
  }
  return $.html();
}
