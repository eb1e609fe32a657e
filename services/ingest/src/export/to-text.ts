// HTML → Markdown (turndown + GFM tables) and HTML → plain text in reading order.
import { gfm } from "@joplin/turndown-plugin-gfm";
import type * as cheerio from "cheerio";
import TurndownService from "turndown";
import { formatNumber } from "../docx/numbering.js";
import { HEADING_TAGS, loadHtml } from "../html/util.js";
import { withoutHiddenText } from "./hidden-text.js";
import { splitParts } from "./parts.js";

type AnyNode = Parameters<typeof cheerio.contains>[0];

/**
 * Markdown with GitHub tables, strikethrough and task lists. Headers and footers are dropped
 * (Markdown has no place for them); the returned warnings say so. Tables with merged cells are
 * flattened by GFM (a warning, too). Hidden text is left out.
 */
export function htmlToMarkdown(html: string): { text: string; warnings: string[] } {
  const parts = splitParts(withoutHiddenText(html));
  const warnings: string[] = [];
  if (parts.headers.length + parts.footers.length > 0)
    warnings.push("Headers and footers have no Markdown equivalent and were left out");
  if (parts.comments.length > 0) warnings.push("Comments have no Markdown equivalent and were left out");
  if (/\s(?:colspan|rowspan)\s*=\s*["']?(?:[2-9]|\d{2,})/i.test(parts.body))
    warnings.push("Merged table cells were split: GFM tables have no merged cells");
  const service = new TurndownService({
    headingStyle: "atx",
    codeBlockStyle: "fenced",
    bulletListMarker: "-",
    emDelimiter: "*",
  });
  service.use(gfm);
  service.addRule("underline", { filter: ["u", "ins"], replacement: (content) => `<u>${content}</u>` });
  service.addRule("superscript", { filter: ["sup"], replacement: (content) => `<sup>${content}</sup>` });
  service.addRule("subscript", { filter: ["sub"], replacement: (content) => `<sub>${content}</sub>` });
  return { text: `${service.turndown(parts.body).trim()}\n`, warnings };
}

const BLOCK = new Set([
  "p",
  "div",
  ...HEADING_TAGS,
  "blockquote",
  "pre",
  "section",
  "article",
  "header",
  "footer",
  "figure",
  "figcaption",
  "dt",
  "dd",
  "hr",
]);

/**
 * Plain text in reading order: one line per block, a blank line between paragraphs, list items
 * prefixed with "- " or their number, table cells separated by tabs and rows by newlines.
 * Headers come first and footers last, each once; hidden text is left out.
 */
export function htmlToText(html: string): string {
  const parts = splitParts(withoutHiddenText(html));
  const render = (fragment: string): string => {
    const $ = loadHtml(fragment);
    const out: string[] = [];
    let line = "";
    // The list item marker just written, which the item's first block continues.
    let marker: string | null = null;
    const flush = () => {
      // Leading spaces are list nesting; the rest collapses.
      const indent = /^ */.exec(line)?.[0] ?? "";
      const t = line.replace(/[ \t]+/g, " ").trim();
      if (t) out.push(indent + t);
      line = "";
      marker = null;
    };
    // A list item's marker waits for the item's first block instead of standing on its own line.
    const flushBlock = () => {
      if (line !== marker) flush();
    };
    const walk = (nodes: AnyNode[], listPrefix = "") => {
      for (const node of nodes) {
        if (node.type === "text") {
          line += node.data.replace(/\s+/g, " ");
          continue;
        }
        if (node.type !== "tag") continue;
        const name = node.name;
        if (name === "br") {
          flush();
        } else if (name === "ul" || name === "ol") {
          flush();
          let n = Number($(node).attr("start") ?? 1) || 1;
          const type = $(node).attr("type");
          // Word's label when it has one number of its own ("%1)", "(%1)"), else "N.".
          const lvlText = $(node).attr("data-lvl-text");
          const single = lvlText && (lvlText.match(/%[1-9]/g) ?? []).length === 1 ? lvlText : "%1.";
          const zero = $(node).attr("data-num-fmt") === "decimalZero";
          const label = (k: number) => {
            const num = listNumber(k, type);
            return single.replace(/%[1-9]/, zero && k >= 0 && k < 10 ? `0${num}` : num);
          };
          for (const li of $(node).children("li").toArray()) {
            line = `${listPrefix}${name === "ol" ? `${label(n++)} ` : "- "}`;
            marker = line;
            walk($(li).contents().toArray(), `${listPrefix}  `);
            flush();
          }
        } else if (name === "table") {
          flush();
          for (const tr of $(node).find("tr").toArray()) {
            if ($(tr).closest("table")[0] !== node) continue;
            // A cell is rendered like the body (its list numbers kept), on one line.
            const cells = $(tr)
              .children("td, th")
              .toArray()
              .map((c) =>
                ($(c).find("ol, [data-list-label]").length > 0 ? render($(c).html() ?? "") : $(c).text())
                  .replace(/\s+/g, " ")
                  .trim(),
              );
            out.push(cells.join("\t"));
          }
        } else if (name === "img") {
          const alt = $(node).attr("alt");
          if (alt) line += `[${alt}]`;
        } else if (BLOCK.has(name) || name === "li") {
          flushBlock();
          // A paragraph Word numbers through its style carries the number it shows.
          const listLabel = name !== "li" ? $(node).attr("data-list-label") : undefined;
          if (listLabel) line += `${listLabel} `;
          walk($(node).contents().toArray(), listPrefix);
          flush();
        } else {
          walk($(node).contents().toArray(), listPrefix);
        }
      }
    };
    walk($.root().contents().toArray());
    flush();
    return out.join("\n");
  };
  return (
    [...parts.headers.map(render), render(parts.body), ...parts.footers.map(render)].filter(Boolean).join("\n\n") + "\n"
  );
}

/** An `<ol>` item's number as its `type` shows it: 3 is "c" (a), "C" (A), "iii" (i), "III" (I). */
function listNumber(n: number, type: string | undefined): string {
  if (n < 1 || (type !== "a" && type !== "A" && type !== "i" && type !== "I")) return String(n);
  let text = "";
  if (type === "a" || type === "A") {
    for (let k = n; k > 0; k = Math.floor((k - 1) / 26)) text = String.fromCharCode(97 + ((k - 1) % 26)) + text;
  } else {
    text = formatNumber(n, "lowerRoman");
  }
  return type === "A" || type === "I" ? text.toUpperCase() : text;
}
