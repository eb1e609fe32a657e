// Export to .docx in place (docx-in-place.ts), the XML side: new paragraphs and tables written
// in the original package's vocabulary, each shaped like the original block it replaces (its
// properties, first run's look, and anchors moved to where the same text sits now).
import { diffChars } from "diff";
import { noteReferenceRun } from "../docx/notes.js";
import { isWebImage, type PictureSource, paragraphHtml } from "../docx/parts.js";
import { elementEnd } from "../docx/source-map.js";
import { type Anchor, childElements, escapeXml, paragraphPieces, type Segment, writeRuns } from "../docx/xml.js";
import type { BlockSpec, ParaSpec, TableSpec } from "./docx-in-place-html.js";
import { NewPictures, type PartRels } from "./docx-package.js";

// Past this many characters a paragraph's anchors are placed by proportion, not by a text diff.
const MAX_DIFF_CHARS = 20_000;

/**
 * Writes new paragraphs and tables into the original package's vocabulary. `rels` is the part
 * being written (the main part, or a header, footer or comments part while it is rewritten):
 * links are related from it, and pictures an edit added are collected for it (picturesOf).
 */
export class BlockWriter {
  /** Pictures an edit added, by the part they go into: each part relates and embeds its own. */
  private readonly newPictures = new Map<PartRels, NewPictures>();
  /** Note references ("footnote:7") written where the original paragraph had none: notes the edit added. */
  readonly newNoteRefs = new Set<string>();

  constructor(
    private readonly headings: string[],
    public rels: PartRels,
    /** True for paragraph properties Word numbers (w:numPr, or a numbered paragraph style). */
    private readonly numbered: (pPr: string) => boolean = (pPr) => /<w:numPr>/.test(pPr),
  ) {}

  /** The pictures an edit added to the part `rels` belongs to. */
  picturesOf(rels: PartRels): NewPictures {
    let pictures = this.newPictures.get(rels);
    if (!pictures) {
      pictures = new NewPictures();
      this.newPictures.set(rels, pictures);
    }
    return pictures;
  }

  /** A relationship id for an external link, from the part being written. */
  link = (href: string): string | null => this.rels.link(href);

  /** One w:p for `spec`, shaped like `orig` (an original w:p, or null). `anchors` false: a copy of the original's look only. */
  paragraph(spec: ParaSpec, orig: string | null, keepAnchors: boolean, wasList: boolean, keepStyle = false): string {
    const pieces = orig ? paragraphPieces(orig) : null;
    let pPr = (pieces?.pPr ?? "")
      .replace(sectPrOf(pieces?.pPr ?? "") ?? "\u0000", "")
      .replace(/<w:pPrChange\b[\s\S]*?<\/w:pPrChange>/g, "");
    pPr = this.adjustProps(pPr, spec, wasList, keepStyle);
    const segments: Segment[] = [];
    let images = 0;
    const drawings = keepAnchors ? (pieces?.drawings ?? []) : [];
    if (spec.list && !/<w:numPr>/.test(pPr) && !this.numbered(pPr))
      segments.push({ kind: "text", text: spec.list.ordered ? "1.\t" : "\u2022\t", fmt: {} });
    for (const seg of spec.segments) {
      if (seg.kind === "image") {
        const run = drawings[images++];
        if (run) segments.push({ kind: "raw", xml: run.xml });
        else segments.push({ kind: "raw", xml: this.picturesOf(this.rels).add(seg.html) });
      } else if (seg.kind === "note") {
        const [type, id] = seg.note.split(":");
        let run = pieces?.notes.get(seg.note);
        if (!run) {
          run = noteReferenceRun(type, id);
          this.newNoteRefs.add(seg.note);
        }
        segments.push({ kind: "raw", xml: run });
      } else segments.push(seg);
    }
    // Drawings the HTML shows no <img> for (text boxes, shapes) stay where they were in the text.
    const newText = segments.map((s) => (s.kind === "text" ? s.text : "")).join("");
    const anchors =
      keepAnchors && pieces ? moveAnchors([...pieces.anchors, ...drawings.slice(images)], pieces.text, newText) : [];
    const runs = writeRuns(segments, anchors, pieces?.firstRunProps ?? "", this.link);
    const open = keepAnchors && orig ? (/^<w:p\b[^>]*?(?<!\/)>/.exec(orig)?.[0] ?? "<w:p>") : "<w:p>";
    return `${open}${pPr}${runs}</w:p>`;
  }

  private adjustProps(pPr: string, spec: ParaSpec, wasList: boolean, keepStyle: boolean): string {
    let out = pPr;
    if (keepStyle && !spec.list && !wasList) return out;
    const style = /<w:pStyle w:val="([^"]*)"\/>/.exec(out)?.[1];
    const isHeadingStyle = style !== undefined && this.headings.includes(style);
    if (spec.heading) {
      const want = this.headings[spec.heading - 1];
      if (style !== want) {
        const tag = `<w:pStyle w:val="${escapeXml(want)}"/>`;
        out =
          style !== undefined
            ? out.replace(/<w:pStyle w:val="[^"]*"\/>/, tag)
            : out
              ? out.replace(/^<w:pPr>/, `<w:pPr>${tag}`)
              : `<w:pPr>${tag}</w:pPr>`;
      }
    } else if (isHeadingStyle) out = out.replace(/<w:pStyle w:val="[^"]*"\/>/, "");
    if (spec.list) out = out.replace(/(<w:numPr>[\s\S]*?<w:ilvl w:val=")\d+("\/>)/, `$1${spec.list.level}$2`);
    else if (wasList) out = out.replace(/<w:numPr>[\s\S]*?<\/w:numPr>/, "");
    return out === "<w:pPr></w:pPr>" ? "" : out;
  }

  /** A w:tbl for `spec`, keeping `orig`'s table, row and cell properties (and unchanged cells as they were). */
  table(spec: TableSpec, orig: string | null, loadedCells: string[][] | null): string {
    const tbl = orig ? childElements(orig) : [];
    const part = (el: { start: number; end: number }) => orig?.slice(el.start, el.end) ?? "";
    const tblPr = tbl.find((c) => c.name === "tblPr");
    const origRows = tbl.filter((c) => c.name === "tr").map((r) => part(r));
    const cols = Math.max(1, ...spec.rows.map((r) => r.cells.length));
    const width = Math.floor(9000 / cols);
    const rows = spec.rows.map((row, r) => {
      const origRow = origRows[Math.min(r, origRows.length - 1)] ?? null;
      const rowEls = origRow ? childElements(origRow) : [];
      const allCells = rowEls.filter((c) => c.name === "tc").map((c) => origRow?.slice(c.start, c.end) ?? "");
      // A vertically merged cell's continuation has no cell in the HTML (the rowspan covers it).
      const continues = (tc: string) => /<w:vMerge\s*\/>|<w:vMerge w:val="continue"\s*\/>/.test(tc);
      const origCells = allCells.filter((tc) => !continues(tc));
      const sameShape = origRow !== null && r < origRows.length && origCells.length === row.cells.length;
      const trPr = rowEls.find((c) => c.name === "trPr");
      const written = row.cells.map((cell, c) => {
        const origCell = sameShape ? origCells[c] : (origCells[Math.min(c, origCells.length - 1)] ?? null);
        if (sameShape && loadedCells?.[r]?.[c] === cell.html && origCell) return origCell;
        const cellEls = origCell ? childElements(origCell) : [];
        const tcPr = cellEls.find((e) => e.name === "tcPr");
        const origParas = cellEls.filter((e) => e.name === "p").map((e) => origCell?.slice(e.start, e.end) ?? "");
        const tcPrXml =
          tcPr && origCell
            ? origCell.slice(tcPr.start, tcPr.end).replace(/<w:vMerge\b[^>]*\/>/, "")
            : `<w:tcPr><w:tcW w:w="${width}" w:type="dxa"/></w:tcPr>`;
        const blocks = this.blocks(cell.blocks, origParas, sameShape, false);
        // A cell must end with a paragraph.
        const inner =
          blocks.length === 0 || blocks[blocks.length - 1].startsWith("<w:tbl") ? [...blocks, "<w:p/>"] : blocks;
        return `<w:tc>${sameShape ? (tcPr && origCell ? origCell.slice(tcPr.start, tcPr.end) : tcPrXml) : tcPrXml}${inner.join("")}</w:tc>`;
      });
      let k = 0;
      const cells = sameShape ? allCells.map((tc) => (continues(tc) ? tc : written[k++])) : written;
      return `<w:tr>${trPr && origRow ? origRow.slice(trPr.start, trPr.end) : ""}${cells.join("")}</w:tr>`;
    });
    const tblPrXml =
      tblPr && orig
        ? part(tblPr)
        : '<w:tblPr><w:tblW w:w="0" w:type="auto"/><w:tblBorders><w:top w:val="single" w:sz="4" w:space="0" w:color="auto"/><w:left w:val="single" w:sz="4" w:space="0" w:color="auto"/><w:bottom w:val="single" w:sz="4" w:space="0" w:color="auto"/><w:right w:val="single" w:sz="4" w:space="0" w:color="auto"/><w:insideH w:val="single" w:sz="4" w:space="0" w:color="auto"/><w:insideV w:val="single" w:sz="4" w:space="0" w:color="auto"/></w:tblBorders></w:tblPr>';
    const grid = sameGrid(tbl, orig, spec) ?? `<w:tblGrid>${`<w:gridCol w:w="${width}"/>`.repeat(cols)}</w:tblGrid>`;
    return `<w:tbl>${tblPrXml}${grid}${rows.join("")}</w:tbl>`;
  }

  /** The blocks of specs, paragraph k shaped like original paragraph k (or the last one). */
  blocks(
    specs: BlockSpec[],
    origParas: string[],
    keepAnchors: boolean,
    wasList: boolean,
    origTable?: string,
    loadedCells?: string[][] | null,
    loadedSpecs?: BlockSpec[],
  ): string[] {
    let k = 0;
    const loadedParas = (loadedSpecs ?? []).filter((s): s is ParaSpec => s.kind === "p");
    return specs.map((spec) => {
      if (spec.kind === "table") return this.table(spec, origTable ?? null, loadedCells ?? null);
      const index = Math.min(k, origParas.length - 1);
      const orig = origParas[index] ?? null;
      const first = k < origParas.length;
      // A paragraph that was already this heading level keeps its own style (Title stays Title).
      const keepStyle = loadedParas[index] !== undefined && loadedParas[index].heading === spec.heading;
      k++;
      return this.paragraph(spec, orig, keepAnchors && first, wasList, keepStyle);
    });
  }
}

function sameGrid(
  tbl: { start: number; end: number; name: string }[],
  orig: string | null,
  spec: TableSpec,
): string | null {
  const grid = tbl.find((c) => c.name === "tblGrid");
  if (!grid || !orig) return null;
  const xml = orig.slice(grid.start, grid.end);
  const cols = (xml.match(/<w:gridCol\b/g) ?? []).length;
  return spec.rows.every((r) => r.cells.length <= cols) ? xml : null;
}

/** Anchors moved from offsets in `oldText` to where the same text sits in `newText`. */
function moveAnchors(anchors: Anchor[], oldText: string, newText: string): Anchor[] {
  if (anchors.length === 0) return [];
  if (oldText === newText) return anchors;
  if (oldText.length + newText.length > MAX_DIFF_CHARS) {
    return anchors.map((a) => ({
      ...a,
      offset: Math.round((a.offset / Math.max(1, oldText.length)) * newText.length),
    }));
  }
  const changes = diffChars(oldText, newText);
  return anchors.map((a) => {
    let oldPos = 0;
    let newPos = 0;
    for (const part of changes) {
      const len = part.value.length;
      if (part.added) {
        newPos += len;
        continue;
      }
      if (a.offset <= oldPos + len) return { ...a, offset: part.removed ? newPos : newPos + (a.offset - oldPos) };
      oldPos += len;
      if (!part.removed) newPos += len;
    }
    return { ...a, offset: newText.length };
  });
}

/**
 * The element at `[start, end)` of `xml` with its text paragraphs replaced by `lines` (the first
 * one's place; paragraphs without text, drawings and other content stay).
 */
export function rewriteTextParagraphs(xml: string, start: number, lines: ParaSpec[], writer: BlockWriter): string {
  const kids = childElements(xml, start);
  // The paragraphs the converter showed (docx/parts.ts): with text, or with a picture it could show.
  const picture = shownPicture(writer.rels);
  const paras = kids.filter(
    (k) =>
      k.name === "p" &&
      paragraphHtml(xml.slice(k.start, k.end), picture)
        .replace(/\u2003/g, "")
        .trim() !== "",
  );
  if (paras.length === 0) return xml;
  const origParas = paras.map((p) => xml.slice(p.start, p.end));
  const written = writer.blocks(lines, origParas, true, false).join("");
  let out = "";
  let last = start;
  paras.forEach((p, i) => {
    out += xml.slice(last, p.start) + (i === 0 ? written : "");
    last = p.end;
  });
  return xml.slice(0, start) + out + xml.slice(last);
}

/** A stand-in `src` for each picture of a part the converter shows as an `<img>` (docx/parts.ts). */
export function shownPicture(rels: PartRels): PictureSource {
  return (rid) => {
    const rel = rels.rels.get(rid);
    return rel && !rel.external && isWebImage(rel.target) ? "shown" : null;
  };
}

/** The section break (w:sectPr, which may nest a changed w:sectPr) of a paragraph's properties. */
export function sectPrOf(xml: string): string | undefined {
  const at = xml.indexOf("<w:sectPr");
  if (at < 0 || !/^<w:sectPr[\s>/]/.test(xml.slice(at, at + 10))) return undefined;
  return xml.slice(at, elementEnd(xml, at));
}

/** `written` with the section break of the original paragraph it replaces, if that had one. */
export function withSection(written: string, original: string): string {
  const sect = sectPrOf(original);
  if (!sect || written.includes("<w:sectPr")) return written;
  return /<w:pPr>/.test(written)
    ? written.replace(/<\/w:pPr>/, `${sect}</w:pPr>`)
    : written.replace(/^(<w:p\b[^>]*>)/, `$1<w:pPr>${sect}</w:pPr>`);
}
