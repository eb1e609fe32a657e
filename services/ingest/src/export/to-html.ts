// HTML export and the print page Chromium renders: one standalone page with the layout as CSS
// @page rules, headers/footers and comments placed out of flow, and an optional watermark.
import { escapeHtml } from "../html/util.js";
import type { ExportLayout } from "./export-formats.js";
import { splitParts } from "./parts.js";

/** What to render. */
export interface PageInput {
  html: string;
  title: string;
  layout: ExportLayout;
  watermarkText?: string;
  watermarkOpacity?: number;
  /** Leave headers and footers out of the page (pdf repeats them on every page instead). */
  omitHeadersFooters?: boolean;
}

const BASE_CSS = `
@media print { body { margin: 0; } }
body { font-family: "Liberation Serif", "Times New Roman", serif; font-size: 12pt; line-height: 1.35; color: #000; }
table { border-collapse: collapse; margin: 0.5em 0; }
td, th { border: 1px solid #777; padding: 2pt 4pt; vertical-align: top; }
img { max-width: 100%; height: auto; }
pre, code { font-family: "Liberation Mono", "Courier New", monospace; font-size: 10pt; }
[data-part="header"], [data-part="footer"] { color: #444; font-size: 9pt; }
[hidden], [data-hidden] { display: none; }
[data-part="comment"] { color: #555; font-size: 9pt; border-left: 2px solid #bbb; padding-left: 6pt; }
.redline-watermark { position: fixed; top: 45%; left: 0; right: 0; text-align: center; font-size: 72pt;
  transform: rotate(-45deg); color: #888; pointer-events: none; z-index: 1000; }
`;

/** CSS `@page` size and margins for a layout. */
export function pageCss(layout: ExportLayout): string {
  const w = layout.orientation === "landscape" ? layout.heightIn : layout.widthIn;
  const h = layout.orientation === "landscape" ? layout.widthIn : layout.heightIn;
  const m = layout.margins;
  return `@page { size: ${w}in ${h}in; margin: ${m.top}in ${m.right}in ${m.bottom}in ${m.left}in; }`;
}

/**
 * A standalone HTML page: headers first, the flow, footers, then comments in an aside (they
 * are never inlined into the text). The watermark is a fixed, rotated, translucent overlay.
 */
export function htmlPage(input: PageInput): string {
  const parts = splitParts(input.html);
  const watermark = input.watermarkText
    ? `<div class="redline-watermark" style="opacity:${Math.min(1, Math.max(0, input.watermarkOpacity ?? 0.3))}">${escapeHtml(input.watermarkText)}</div>`
    : "";
  const comments =
    parts.comments.length > 0
      ? `<aside class="redline-comments"><h2>Comments</h2>${parts.comments.join("\n")}</aside>`
      : "";
  return [
    "<!DOCTYPE html>",
    '<html><head><meta charset="utf-8">',
    `<title>${escapeHtml(input.title)}</title>`,
    `<style>${pageCss(input.layout)}${BASE_CSS}</style>`,
    "</head><body>",
    watermark,
    parts.headers.length > 0 && !input.omitHeadersFooters ? `<header>${parts.headers.join("\n")}</header>` : "",
    `<main>${parts.body}</main>`,
    parts.footers.length > 0 && !input.omitHeadersFooters ? `<footer>${parts.footers.join("\n")}</footer>` : "",
    comments,
    "</body></html>",
  ]
    .filter(Boolean)
    .join("\n");
}
