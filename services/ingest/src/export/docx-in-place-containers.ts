// Export to .docx in place (docx-in-place.ts): body blocks that are neither a paragraph nor a
// table: content controls (w:sdt, Word's repeating sections among them), w:customXml and the like.
// Mammoth reads through them, so their paragraphs are several chunks while the block is one, owned
// by the chunk of its first paragraph. Such a block is never rewritten whole: an edited (or
// deleted) chunk is written into the one paragraph inside it whose text it had, and the control,
// its other paragraphs and its properties stay byte for byte; when that paragraph cannot be found
// the block is kept as it was and a warning names the construct (issue #32, content controls).
import { paragraphPieces } from "../docx/xml.js";
import { blockSpecs, chunkElement, norm, specText } from "./docx-in-place-html.js";
import type { BlockWriter } from "./docx-in-place-writer.js";

/** True for a body block other than a paragraph or a table that holds paragraphs (not a body-level bookmark). */
export function isContainer(block: string): boolean {
  return !/^<w:(?:p|tbl)[\s>/]/.test(block) && /<w:p[\s>]/.test(block);
}

/** What a user would call the construct a container block is, for a warning. */
export function constructName(block: string): string {
  if (/^<w:sdt[\s>]/.test(block)) {
    const head = block.slice(0, block.indexOf("</w:sdtPr>") + 1 || 2000);
    if (/<w15:repeatingSection\b/.test(block)) return "a repeating-section content control (w:sdt)";
    const alias = /<w:alias w:val="([^"]*)"/.exec(head)?.[1];
    return alias ? `the content control "${alias}" (w:sdt)` : "a content control (w:sdt)";
  }
  const name = /^<([\w.-]+:[\w.-]+)/.exec(block)?.[1] ?? "an element";
  return name === "w:customXml" ? "a custom XML element (w:customXml)" : `a ${name} element`;
}

const INNERMOST_P = /<w:p\b[^>]*?(?<!\/)>(?:(?!<w:p\b)[\s\S])*?<\/w:p>/g;

/** The innermost paragraphs of `blocks` whose text is `text`: block index, offset and XML. */
function paragraphsWithText(blocks: string[], text: string): { block: number; at: number; xml: string }[] {
  const hits: { block: number; at: number; xml: string }[] = [];
  blocks.forEach((block, i) => {
    for (const m of block.matchAll(INNERMOST_P))
      if (norm(paragraphPieces(m[0]).text) === text) hits.push({ block: i, at: m.index, xml: m[0] });
  });
  return hits;
}

/** A short quote of a chunk's text for a warning. */
function quote(text: string): string {
  return `"${text.length > 60 ? `${text.slice(0, 57)}...` : text}"`;
}

/**
 * The blocks of a chunk whose original blocks `orig` hold a container, with the chunk's edit
 * (`html`, or null when the chunk was deleted) written into the one paragraph that had its loaded
 * text. When the chunk is not one paragraph, or no single paragraph has that text, `orig` is
 * returned as it was and `warn` is told which construct kept the edit out.
 */
export function rewriteInContainer(
  writer: BlockWriter,
  orig: string[],
  html: string | null,
  loaded: string | undefined,
  warn: (message: string) => void,
): string[] {
  const container = orig.find(isContainer) ?? orig[0] ?? "";
  const was = loaded ? chunkElement(loaded) : null;
  const wasSpecs = was ? blockSpecs(was, {}) : [];
  const now = html === null ? null : chunkElement(html);
  const nowSpecs = now ? blockSpecs(now, {}) : [];
  const before = wasSpecs.length === 1 && wasSpecs[0].kind === "p" ? wasSpecs[0] : null;
  const text = before ? specText(before) : "";
  const refuse = (why: string) => {
    warn(
      `An edit to ${quote(text || "a passage")} was not written: it is inside ${constructName(container)}, which the in-place export does not rewrite (${why}); that passage keeps its original text`,
    );
    return orig;
  };
  if (!before || !text) return refuse("the passage is not a single paragraph");
  const spec = nowSpecs.length === 1 && nowSpecs[0].kind === "p" ? nowSpecs[0] : null;
  if (html !== null && !spec) return refuse("the edit made it more than one paragraph");
  const hits = paragraphsWithText(orig, text);
  if (hits.length === 0) return refuse("its paragraph was not found");
  // The chunk that owns a control is the one of its first paragraph (docx/source-map.ts tags
  // that one): among paragraphs of the same text (repeated items), that is the one.
  const firstOfControl = (hit: { block: number; at: number }) =>
    isContainer(orig[hit.block]) && [...orig[hit.block].matchAll(INNERMOST_P)][0]?.index === hit.at;
  if (hits.length > 1 && !firstOfControl(hits[0])) return refuse("its text is not unique there");
  const [hit] = hits;
  const block = orig[hit.block];
  let written: string;
  if (spec) written = writer.paragraph(spec, hit.xml, true, false, before.heading === spec.heading);
  else {
    // A deleted paragraph leaves the control; an emptied control keeps one empty paragraph, as Word does.
    const others = [...block.matchAll(INNERMOST_P)].length - 1;
    written = others > 0 ? "" : "<w:p/>";
  }
  const out = [...orig];
  out[hit.block] = block.slice(0, hit.at) + written + block.slice(hit.at + hit.xml.length);
  return out;
}
