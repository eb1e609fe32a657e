// Export to .docx in place (docx-in-place.ts): a changed or new body chunk as blocks. A list or
// quote is rewritten item by item where its items can be found again; a chunk with no block of
// its own (a text box's paragraph) is written into the paragraph that holds its text.
import { diffArrays } from "diff";
import { paragraphPieces } from "../docx/xml.js";
import { isContainer } from "./docx-in-place-containers.js";
import {
  type BlockSpec,
  blockSpecs,
  chunkElement,
  norm,
  type ParaSpec,
  specKey,
  specText,
  tableCells,
} from "./docx-in-place-html.js";
import { type BlockWriter, sectPrOf, withSection } from "./docx-in-place-writer.js";

/** The blocks for a changed or new chunk, shaped like its original blocks. */
export function rewriteChunk(writer: BlockWriter, html: string, loaded: string | undefined, orig: string[]): string[] {
  const el = chunkElement(html);
  if (!el) return [];
  const specs = blockSpecs(el, {});
  const origParas = orig.filter((b) => b.startsWith("<w:p"));
  const origTable = orig.find((b) => b.startsWith("<w:tbl"));
  const loadedEl = loaded ? chunkElement(loaded) : null;
  const wasList = loadedEl?.name === "ul" || loadedEl?.name === "ol";
  const loadedSpecs = loadedEl ? blockSpecs(loadedEl, {}) : undefined;
  if (!origTable && loadedSpecs && orig.length > 1) {
    const aligned = alignedRewrite(writer, specs, loadedSpecs, orig, wasList);
    if (aligned) return aligned;
  }
  const blocks = writer.blocks(specs, origParas, true, wasList, origTable, tableCells(loaded), loadedSpecs);
  // Section breaks of the original blocks stay: on the last paragraph written, or on their own.
  const sects = orig.flatMap((b) => (b.startsWith("<w:p") ? (sectPrOf(b) ?? []) : []));
  if (sects.length === 0) return blocks;
  const last = blocks.length - 1;
  const lastSect = sects.pop() as string;
  const out = [...blocks];
  if (last >= 0 && out[last].startsWith("<w:p")) {
    out[last] = /<w:pPr>/.test(out[last])
      ? out[last].replace(/<\/w:pPr>/, `${lastSect}</w:pPr>`)
      : out[last].replace(/^(<w:p\b[^>]*>)/, `$1<w:pPr>${lastSect}</w:pPr>`);
  } else out.push(`<w:p><w:pPr>${lastSect}</w:pPr></w:p>`);
  return [...sects.map((s) => `<w:p><w:pPr>${s}</w:pPr></w:p>`), ...out];
}

/**
 * A changed multi-paragraph chunk (a list, a quote) rewritten item by item: the loaded items are
 * found in the original blocks by their text, the new items are aligned with the loaded ones
 * (diffArrays), unchanged items keep their original block byte for byte, a changed item takes
 * the place and look of the one it replaces, blocks no item came from stay. Null when the loaded
 * items cannot all be found (the whole chunk is then rewritten).
 */
function alignedRewrite(
  writer: BlockWriter,
  specs: BlockSpec[],
  loadedSpecs: BlockSpec[],
  orig: string[],
  wasList: boolean,
): string[] | null {
  if (!specs.every((s) => s.kind === "p") || !loadedSpecs.every((s) => s.kind === "p")) return null;
  const newParas = specs as ParaSpec[];
  const loadedParas = loadedSpecs as ParaSpec[];
  const texts = orig.map((b) => (b.startsWith("<w:p") ? norm(paragraphPieces(b).text) : null));
  let from = 0;
  const blockOf: number[] = [];
  for (const spec of loadedParas) {
    const text = specText(spec);
    let found = -1;
    for (let j = from; j < orig.length && found < 0; j++) if (texts[j] === text) found = j;
    if (found < 0) return null;
    blockOf.push(found);
    from = found + 1;
  }
  const claimed = new Set(blockOf);
  const out: string[] = [];
  let next = 0;
  // Blocks before `to` that no loaded item came from (empty paragraphs, deleted-tracked ones).
  const emitUnclaimed = (to: number) => {
    for (; next < to; next++) if (!claimed.has(next)) out.push(orig[next]);
  };
  const templates: number[] = [];
  let li = 0;
  let ni = 0;
  for (const part of diffArrays(loadedParas.map(specKey), newParas.map(specKey))) {
    for (let k = 0; k < (part.count ?? part.value.length); k++) {
      if (part.added) {
        const template = templates.shift();
        const shape = template ?? blockOf[Math.min(li, blockOf.length - 1)] ?? blockOf[blockOf.length - 1];
        const written = writer.paragraph(newParas[ni], orig[shape] ?? null, template !== undefined, wasList);
        out.push(template !== undefined ? withSection(written, orig[template]) : written);
        ni++;
      } else if (part.removed) {
        emitUnclaimed(blockOf[li]);
        templates.push(blockOf[li]);
        next = blockOf[li] + 1;
        li++;
      } else {
        // Removed items not replaced keep only their section break.
        for (const t of templates.splice(0)) {
          const sect = sectPrOf(orig[t]);
          if (sect) out.push(`<w:p><w:pPr>${sect}</w:pPr></w:p>`);
        }
        emitUnclaimed(blockOf[li]);
        out.push(orig[blockOf[li]]);
        next = blockOf[li] + 1;
        li++;
        ni++;
      }
    }
  }
  for (const t of templates) {
    const sect = sectPrOf(orig[t]);
    if (sect) out.push(`<w:p><w:pPr>${sect}</w:pPr></w:p>`);
  }
  emitUnclaimed(orig.length);
  return out;
}

/**
 * Writes an edited chunk that has no block of its own (a text box's paragraph, a paragraph
 * mammoth lifted out of a drawing) into the one innermost paragraph of `blocks` whose text is the
 * loaded chunk's text. False when it is not a single paragraph or no unique paragraph matches.
 */
export function editNestedParagraph(
  writer: BlockWriter,
  blocks: string[],
  html: string,
  loaded: string | undefined,
): boolean {
  const now = chunkElement(html);
  const before = loaded ? chunkElement(loaded) : null;
  if (!now || !before) return false;
  const [spec, ...more] = blockSpecs(now, {});
  const [was, ...moreWas] = blockSpecs(before, {});
  if (!spec || !was || more.length > 0 || moreWas.length > 0 || spec.kind !== "p" || was.kind !== "p") return false;
  const text = specText(was);
  if (!text) return false;
  const innermost = /<w:p\b[^>]*?(?<!\/)>(?:(?!<w:p\b)[\s\S])*?<\/w:p>/g;
  const hits: { block: number; at: number; xml: string }[] = [];
  blocks.forEach((block, i) => {
    for (const m of block.matchAll(innermost))
      if (norm(paragraphPieces(m[0]).text) === text) hits.push({ block: i, at: m.index, xml: m[0] });
  });
  // A text box is written twice (DrawingML and its VML fallback): every copy in one block is
  // edited. Other copies in a content control are repeated items, of which only one was edited.
  if (hits.length === 0 || hits.some((h) => h.block !== hits[0].block)) return false;
  const fallbacks = [...blocks[hits[0].block].matchAll(/<mc:Fallback\b[\s\S]*?<\/mc:Fallback>/g)].map((m) => [
    m.index,
    m.index + m[0].length,
  ]);
  const primary = hits.filter((h) => !fallbacks.some(([from, to]) => h.at >= from && h.at < to));
  if (primary.length > 1 && isContainer(blocks[hits[0].block])) return false;
  let block = blocks[hits[0].block];
  for (const hit of [...hits].reverse()) {
    const written = writer.paragraph(spec, hit.xml, true, false, was.heading === spec.heading);
    block = block.slice(0, hit.at) + written + block.slice(hit.at + hit.xml.length);
  }
  blocks[hits[0].block] = block;
  return true;
}
