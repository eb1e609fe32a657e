// RTF → HTML with a small single-pass reader (rtf.js needs jsdom globals in the process and
// flattens tables anyway): it keeps paragraphs, bold/italic/underline/strike/super/subscript,
// hyperlinks, flat lists, tables (\trowd/\cell), outline-level headings, footnotes, JPEG and
// PNG pictures (as data: images, moved to the object store by ingest), and headers and footers
// as out-of-flow parts; fonts, colours, shapes and WMF/EMF pictures are dropped with a warning.
import { InputError } from "@redline/service-kit";
import { baseTitle, type ConvertResult } from "../formats.js";
import { collapseWhitespace, firstHeadingText } from "./html-util.js";
import { type RtfPart, RtfReader } from "./rtf-reader.js";

/** One block per header or footer: its paragraphs joined by line breaks; "" when empty. */
function partBlock(p: RtfPart): string {
  const inner = p.sink.blocks
    .map((b) => b.replace(/^<p>([\s\S]*)<\/p>$/, "$1"))
    .filter((b) => b.trim() !== "")
    .join("<br>");
  return inner ? `<p data-part="${p.part}" data-variant="${p.variant}">${inner}</p>` : "";
}

/**
 * The document's blocks: headers first, the body, the footnotes list, footers last
 * (out-of-flow parts, docs/ARCHITECTURE.md); each distinct header or footer text once.
 */
function documentHtml(reader: RtfReader): string {
  const seenParts = new Set<string>();
  const partHtml = (kind: "header" | "footer") =>
    reader.parts
      .filter((p) => p.part === kind)
      .map(partBlock)
      .filter((b) => b !== "" && !seenParts.has(b) && seenParts.add(b));
  const blocks = [...partHtml("header"), ...reader.body.blocks];
  if (reader.footnotes.length > 0) {
    const items = reader.footnotes.map((f, k) => `<li id="footnote-${k + 1}">${f.blocks.join("")}</li>`).join("");
    blocks.push(`<ol data-part="footnote">${items}</ol>`);
  }
  blocks.push(...partHtml("footer"));
  return blocks.join("\n");
}

/**
 * Converts an RTF document to HTML. Text in `\\'hh` escapes is decoded with the declared
 * `\\ansicpgN` code page (Windows-1252 by default) and `\\uN` escapes as UTF-16. Throws
 * InputError when the file is not RTF or is nested beyond reason.
 */
export async function convertRtf(bytes: Buffer, filename: string): Promise<ConvertResult> {
  const start = bytes.indexOf("{\\rtf");
  if (start < 0 || start > 16)
    throw new InputError("The .rtf file is not an RTF document (it does not start with {\\rtf)");
  const reader = new RtfReader(bytes, start);
  reader.read();
  const html = documentHtml(reader);
  return {
    html,
    title: collapseWhitespace(reader.title) || firstHeadingText(html) || baseTitle(filename),
    pageSetup: null,
    warnings: [...reader.warnings],
    format: "rtf",
  };
}
