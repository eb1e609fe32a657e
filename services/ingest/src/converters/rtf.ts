// RTF → HTML with a small single-pass reader (rtf.js needs jsdom globals in the process and
// flattens tables anyway): it keeps paragraphs, bold/italic/underline/strike/super/subscript,
// hyperlinks, flat lists, tables (\trowd/\cell), outline-level headings, footnotes, JPEG and
// PNG pictures (as data: images, moved to the object store by ingest), and headers and footers
// as out-of-flow parts; fonts, colours, shapes and WMF/EMF pictures are dropped with a warning.
import { InputError } from "@redline/service-kit";
import { baseTitle, type ConvertResult } from "../formats.js";
import { collapseWhitespace, firstHeadingText } from "../html/util.js";
import { type RtfPart, RtfReader } from "./rtf-reader.js";

/**
 * The blocks of one header or footer, each marked `data-part`/`data-variant`: consecutive
 * paragraphs joined by line breaks into one `<p>`, and each table or list its own block (a
 * `<table>` inside a `<p>` would be torn out of it, into the flow, when the HTML is parsed).
 */
function partBlocks(p: RtfPart): string[] {
  const marks = `data-part="${p.part}" data-variant="${p.variant}"`;
  const out: string[] = [];
  let lines: string[] = [];
  const flushLines = () => {
    if (lines.length > 0) out.push(`<p ${marks}>${lines.join("<br>")}</p>`);
    lines = [];
  };
  for (const block of p.sink.blocks) {
    const paragraph = /^<(p|h[1-6])>([\s\S]*)<\/\1>$/.exec(block);
    if (paragraph) {
      if (paragraph[2].trim() !== "") lines.push(paragraph[2]);
      continue;
    }
    flushLines();
    out.push(block.replace(/^<(table|ul|ol)>/, `<$1 ${marks}>`));
  }
  flushLines();
  return out;
}

/**
 * The document's blocks: headers first, the body, the footnotes list, footers last
 * (out-of-flow parts, docs/ARCHITECTURE.md); each distinct header or footer block once.
 */
function documentHtml(reader: RtfReader): string {
  const seenParts = new Set<string>();
  const partHtml = (kind: "header" | "footer") =>
    reader.parts
      .filter((p) => p.part === kind)
      .flatMap(partBlocks)
      .filter((b) => !seenParts.has(b) && seenParts.add(b));
  const blocks = [...partHtml("header"), ...reader.body.blocks];
  if (reader.footnotes.length > 0) {
    const items = reader.footnotes.map((f, k) => `<li id="footnote-${k + 1}">${f.blocks.join("")}</li>`).join("");
    blocks.push(`<ol data-part="footnote">${items}</ol>`);
  }
  blocks.push(...partHtml("footer"));
  return blocks.join("\n");
}

/**
 * Converts an RTF document to HTML. Text in `\\'hh` escapes is decoded in the code page of the
 * current font (its `\\fcharsetN` or `\\cpgN` in the font table), else the declared
 * `\\ansicpgN` (Windows-1252 by default), a double-byte character spanning two escapes; bytes
 * the code page cannot decode add a warning. `\\uN` escapes are read as UTF-16. Throws
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
