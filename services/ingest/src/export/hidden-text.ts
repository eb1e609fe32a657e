// Hidden text (`<span data-hidden="true" hidden>`, imported from Word's w:vanish runs) in the
// exports: left out of txt and markdown, not shown by html/pdf (the attribute and a CSS rule),
// and written back to docx as text in a character style that hides it (w:vanish), which the
// docx import reads as hidden again.
import { findAll, loadHtml } from "../html/util.js";

/** The Word character style hidden text is written in; its name is what the docx import maps. */
export const HIDDEN_CHARACTER_STYLE = { id: "RedlineHidden", name: "Redline Hidden", run: { vanish: true } };

/** docx/html's styleMap entry giving hidden spans that style. */
export const HIDDEN_STYLE_MAP = { "span[data-hidden]": HIDDEN_CHARACTER_STYLE.id };

/** `html` without its hidden spans (for txt and markdown, which cannot hide text). */
export function withoutHiddenText(html: string): string {
  if (!html.includes("data-hidden")) return html;
  const $ = loadHtml(html);
  const hidden = findAll($.root()[0], (el) => el.name === "span" && el.attribs["data-hidden"] !== undefined);
  if (hidden.length === 0) return html;
  $(hidden).remove();
  return $.html();
}

/**
 * `html` for docx/html, which leaves out `[hidden]` elements as a browser does: hidden spans
 * lose the attribute and keep `data-hidden`, which HIDDEN_STYLE_MAP turns into hidden text.
 */
export function hiddenTextForDocx(html: string): string {
  if (!html.includes("data-hidden")) return html;
  const $ = loadHtml(html);
  const hidden = findAll($.root()[0], (el) => el.name === "span" && el.attribs["data-hidden"] !== undefined);
  if (hidden.length === 0) return html;
  for (const el of hidden) delete el.attribs.hidden;
  return $.html();
}
