// Footnotes and endnotes of a .docx, as both directions see them. In HTML (mammoth's shape, which
// the importer marks and the in-place export reads back): an `<ol data-part="footnote">` of
// `<li id="footnote-N">` items at the end, referenced by `<a id="footnote-ref-N" href="#footnote-N">`.
// In the XML: `<w:footnote w:id="N">` elements of word/footnotes.xml, referenced by runs holding
// `<w:footnoteReference w:id="N"/>` (endnotes alike).
import { escapeXml } from "./xml.js";

/**
 * Marks mammoth's notes lists (the `<ol>` of `<li id="footnote-N">` / `endnote-N` at the end)
 * as out-of-flow parts: `data-part="footnote"` / `"endnote"`. They stay last, in the flow.
 */
export function markNotes(html: string): string {
  return html.replace(/<ol>(?=<li id="(footnote|endnote)-)/g, (_, kind: string) => `<ol data-part="${kind}">`);
}

/** The run of a note reference the in-place writer makes: Word's reference style, the note's id. */
export function noteReferenceRun(kind: string, id: string): string {
  const style = kind === "footnote" ? "FootnoteReference" : "EndnoteReference";
  return `<w:r><w:rPr><w:rStyle w:val="${style}"/></w:rPr><w:${kind}Reference w:id="${escapeXml(id)}"/></w:r>`;
}

/** Where each note of a notes part starts, by its w:id (separators included). */
export function noteStarts(xml: string, kind: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of xml.matchAll(new RegExp(`<w:${kind}\\b[^>]*?\\sw:id="([^"]*)"`, "g"))) out.set(m[1], m.index);
  return out;
}
