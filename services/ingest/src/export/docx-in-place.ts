// Export to .docx by writing the uploaded package back with only what changed regenerated
// (issue #12, edit in place). Untouched chunks are written as their original body blocks, byte
// for byte; so are the blocks no chunk came from (empty paragraphs, drawings' anchors), the
// final w:sectPr and every other part (styles, numbering, settings, media, fields, equations).
// A changed paragraph keeps its w:pPr (style, numbering, section break), its first run's
// formatting and its bookmarks, comment ranges, note references, drawings and equations at
// their place in the text; a deleted chunk's section break is kept on an empty paragraph.
// Edited headers, footers, comments and notes rewrite their own parts the same way; notes added
// or removed with their references are added to or removed from the notes part. What the
// upload carried that would harm whoever opens the export is cleaned on the way: unsafe entry
// names (docx-package-names.ts) and external relationships Word would fetch or that point at
// local files (docx-package-links.ts); only the parts that had something to clean change.
import { chunkHtml, partOf } from "@redline/html-chunks";
import { diffArrays, diffChars } from "diff";
import JSZip from "jszip";
import { docxPageSetup } from "../converters/docx-page-setup.js";
import { paragraphHtml } from "../converters/docx-parts.js";
import { bodyLayout, elementEnd } from "../converters/docx-source-map.js";
import { loadHtml } from "../converters/html-util.js";
import type { DocumentSource, SourceMap, SourceSpan } from "../sources/types.js";
import {
  addWatermark,
  applyPageRequest,
  type ImageLookup,
  NewPictures,
  type PageRequest,
  PartRels,
  pageChanges,
  textWidthPx,
} from "./docx-package.js";
import { dropUnsafeRelationships } from "./docx-package-links.js";
import { loadPackage } from "./docx-package-names.js";
import {
  type Anchor,
  childElements,
  escapeXml,
  paragraphPieces,
  type RunFormat,
  type Segment,
  writeRuns,
} from "./docx-xml.js";

type Node = ReturnType<ReturnType<typeof loadHtml>>[number];
type El = Extract<Node, { attribs: Record<string, string> }>;

/** What an in-place export produced. */
export interface InPlaceResult {
  bytes: Buffer;
  warnings: string[];
  /** Chunk id → its blocks in the OUTPUT word/document.xml (what tracked changes are written against). */
  map: SourceMap;
}

/** What an in-place export may add beyond the edited text. */
export interface InPlaceOptions {
  /** Bytes of the pictures an edit added (`<img src>`: data: URLs and stored images). */
  images?: ImageLookup;
  /**
   * The page the export asks for (its options, else the document's page setup); what differs
   * from the original's own page is written into every section.
   */
  page?: PageRequest;
  /** A text watermark on every page (opacity 0..1), as the generated export writes it. */
  watermark?: { text: string; opacity: number };
}

// Past this many characters a paragraph's anchors are placed by proportion, not by a text diff.
const MAX_DIFF_CHARS = 20_000;

/** The package's main part named by _rels/.rels (default word/document.xml). */
function mainPartName(rels: string | undefined): string {
  const rel = rels?.match(/<Relationship\b[^>]*Type="[^"]*\/officeDocument"[^>]*>/)?.[0];
  const target = rel?.match(/Target="([^"]+)"/)?.[1];
  return target ? target.replace(/^\//, "") : "word/document.xml";
}

/** Paragraph style ids of Heading 1-6 (by style name), falling back to "Heading<N>". */
function headingStyles(stylesXml: string | undefined): string[] {
  const ids = [1, 2, 3, 4, 5, 6].map((n) => `Heading${n}`);
  for (const style of stylesXml?.match(/<w:style\b[^>]*w:type="paragraph"[\s\S]*?<\/w:style>/g) ?? []) {
    const id = /w:styleId="([^"]*)"/.exec(style)?.[1];
    const name = /<w:name w:val="([^"]*)"/.exec(style)?.[1]?.toLowerCase();
    const level = name ? /^heading ([1-6])$/.exec(name)?.[1] : undefined;
    if (id && level) ids[Number(level) - 1] = id;
  }
  return ids;
}

// ---------------------------------------------------------------------------------------------
// HTML side: a chunk as paragraphs and tables.

interface ParaSpec {
  kind: "p";
  heading?: number;
  list?: { ordered: boolean; level: number };
  segments: HtmlSegment[];
}
interface TableSpec {
  kind: "table";
  rows: { cells: { html: string; blocks: BlockSpec[] }[] }[];
}
type BlockSpec = ParaSpec | TableSpec;
type HtmlSegment = Segment | { kind: "image"; html: string } | { kind: "note"; note: string };

const BLOCK_TAGS = new Set([
  "p",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "ul",
  "ol",
  "li",
  "table",
  "blockquote",
  "pre",
  "div",
  "figure",
  "figcaption",
  "dl",
  "dt",
  "dd",
  "hr",
  "section",
  "article",
  "header",
  "footer",
  "aside",
  "nav",
  "main",
]);

function isElement(node: Node): node is El {
  return (node as El).attribs !== undefined && (node as { type?: string }).type === "tag";
}

function inlineSegments(nodes: Node[], fmt: RunFormat, pre: boolean, out: HtmlSegment[]): void {
  for (const node of nodes) {
    if (!isElement(node)) {
      const data = (node as { data?: string }).data;
      if ((node as { type?: string }).type === "text" && data) {
        out.push({ kind: "text", text: pre ? data : data.replace(/[\r\n]+/g, " "), fmt });
      }
      continue;
    }
    const name = node.name;
    const kids = node.children as Node[];
    const note = name === "a" ? /^#(footnote|endnote)-(.+)$/.exec(node.attribs.href ?? "") : null;
    if (note && /^(?:footnote|endnote)-ref-/.test(node.attribs.id ?? ""))
      out.push({ kind: "note", note: `${note[1]}:${note[2]}` });
    else if (name === "br") out.push({ kind: "text", text: "\n", fmt });
    else if (name === "img") out.push({ kind: "image", html: loadHtml("").html(node) });
    else if (name === "strong" || name === "b") inlineSegments(kids, { ...fmt, b: true }, pre, out);
    else if (name === "em" || name === "i") inlineSegments(kids, { ...fmt, i: true }, pre, out);
    else if (name === "u" || name === "ins") inlineSegments(kids, { ...fmt, u: true }, pre, out);
    else if (name === "s" || name === "strike" || name === "del") inlineSegments(kids, { ...fmt, s: true }, pre, out);
    else if (name === "sup") inlineSegments(kids, { ...fmt, sup: true }, pre, out);
    else if (name === "sub") inlineSegments(kids, { ...fmt, sub: true }, pre, out);
    else if (name === "code" || name === "kbd" || name === "samp")
      inlineSegments(kids, { ...fmt, code: true }, pre, out);
    else if (name === "a" && node.attribs.href && !node.attribs.href.startsWith("#"))
      inlineSegments(kids, { ...fmt, href: node.attribs.href }, pre, out);
    else inlineSegments(kids, fmt, pre, out);
  }
}

/** The chunk element as paragraph and table specs, in order. */
function blockSpecs(
  el: El,
  ctx: { list?: { ordered: boolean; level: number }; heading?: number; pre?: boolean },
): BlockSpec[] {
  const name = el.name;
  if (name === "table") return [tableSpec(el)];
  if (name === "ul" || name === "ol") {
    const level = ctx.list ? ctx.list.level + 1 : 0;
    return (el.children as Node[])
      .filter(isElement)
      .flatMap((li) => blockSpecs(li, { list: { ordered: name === "ol", level } }));
  }
  const heading = /^h([1-6])$/.exec(name) ? Number(name.slice(1)) : ctx.heading;
  const pre = ctx.pre || name === "pre";
  const kids = el.children as Node[];
  if (name === "hr") return [{ kind: "p", segments: [] }];
  if (!kids.some((k) => isElement(k) && BLOCK_TAGS.has(k.name))) {
    const segments: HtmlSegment[] = [];
    inlineSegments(kids, {}, pre, segments);
    return [{ kind: "p", heading, list: ctx.list, segments }];
  }
  // Mixed content: inline runs between blocks are paragraphs of their own; a list item's first
  // paragraph carries its bullet, nested lists go one level deeper.
  const out: BlockSpec[] = [];
  let inline: Node[] = [];
  let first = true;
  const flushInline = () => {
    const segments: HtmlSegment[] = [];
    inlineSegments(inline, {}, pre, segments);
    inline = [];
    if (!segments.some((s) => s.kind !== "text" || s.text.trim() !== "")) return;
    out.push({ kind: "p", heading, list: first ? ctx.list : undefined, segments });
    first = false;
  };
  for (const kid of kids) {
    if (isElement(kid) && BLOCK_TAGS.has(kid.name)) {
      flushInline();
      const nested = kid.name === "ul" || kid.name === "ol";
      const inner = blockSpecs(kid, {
        list: nested ? ctx.list : first ? ctx.list : undefined,
        heading,
        pre,
      });
      if (inner.length > 0 && !nested) first = false;
      out.push(...inner);
    } else inline.push(kid);
  }
  flushInline();
  return out;
}

function tableSpec(el: El): TableSpec {
  const rows: TableSpec["rows"] = [];
  const visit = (node: El) => {
    for (const kid of (node.children as Node[]).filter(isElement)) {
      if (kid.name === "tr") {
        rows.push({
          cells: (kid.children as Node[])
            .filter(isElement)
            .filter((c) => c.name === "td" || c.name === "th")
            .map((c) => ({ html: loadHtml("").html(c), blocks: blockSpecs(c, {}) })),
        });
      } else if (kid.name === "thead" || kid.name === "tbody" || kid.name === "tfoot") visit(kid);
    }
  };
  visit(el);
  return { kind: "table", rows };
}

function chunkElement(html: string): El | null {
  const $ = loadHtml(html);
  return ($.root().children().toArray() as Node[]).find(isElement) ?? null;
}

// ---------------------------------------------------------------------------------------------
// XML side.

/**
 * Writes new paragraphs and tables into the original package's vocabulary. `rels` is the part
 * being written (the main part, or a header, footer or comments part while it is rewritten):
 * links are related from it, and pictures an edit added are collected for it (picturesOf).
 */
class BlockWriter {
  /** Pictures an edit added, by the part they go into: each part relates and embeds its own. */
  private readonly newPictures = new Map<PartRels, NewPictures>();
  /** Note references ("footnote:7") written where the original paragraph had none: notes the edit added. */
  readonly newNoteRefs = new Set<string>();

  constructor(
    private readonly headings: string[],
    public rels: PartRels,
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
    if (spec.list && !/<w:numPr>/.test(pPr))
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

/** Cell HTML of a table chunk, by row and column (how the document was loaded). */
function tableCells(html: string | undefined): string[][] | null {
  const el = html ? chunkElement(html) : null;
  if (el?.name !== "table") return null;
  return tableSpec(el).rows.map((r) => r.cells.map((c) => c.html));
}

// ---------------------------------------------------------------------------------------------
// Out-of-flow parts.

interface PartRef {
  kind: "header" | "footer";
  target: string;
}

/** Headers and footers in the order the converter made their chunks (docx-parts.ts). */
function partRefs(
  documentXml: string,
  rels: Map<string, { target: string; type: string }>,
  files: Map<string, string>,
): PartRef[] {
  const out: PartRef[] = [];
  const seen = new Set<string>();
  for (const ref of documentXml.match(/<w:(?:headerReference|footerReference)\b[^>]*>/g) ?? []) {
    const id = /\sr:id="([^"]*)"/.exec(ref)?.[1];
    const target = id ? rels.get(id)?.target : undefined;
    if (!target || seen.has(target)) continue;
    seen.add(target);
    const xml = files.get(target);
    if (!xml) continue;
    const hasText = (xml.match(/<w:p\b[\s\S]*?<\/w:p>/g) ?? []).some(
      (p) =>
        paragraphHtml(p)
          .replace(/\u2003/g, "")
          .trim() !== "",
    );
    if (hasText) out.push({ kind: ref.startsWith("<w:header") ? "header" : "footer", target });
  }
  return out;
}

/** Lines of a part chunk (`<p data-part>a<br>b</p>`) as paragraph specs. */
function partLines(html: string): ParaSpec[] {
  const el = chunkElement(html);
  if (!el) return [];
  const segments: HtmlSegment[] = [];
  inlineSegments(el.children as Node[], {}, false, segments);
  const lines: ParaSpec[] = [{ kind: "p", segments: [] }];
  for (const seg of segments) {
    if (seg.kind === "text" && seg.text.includes("\n")) {
      const pieces = seg.text.split("\n");
      pieces.forEach((text, i) => {
        if (i > 0) lines.push({ kind: "p", segments: [] });
        if (text) lines[lines.length - 1].segments.push({ ...seg, text });
      });
    } else lines[lines.length - 1].segments.push(seg);
  }
  return lines;
}

/**
 * The element at `[start, end)` of `xml` with its text paragraphs replaced by `lines` (the first
 * one's place; paragraphs without text, drawings and other content stay).
 */
function rewriteTextParagraphs(xml: string, start: number, lines: ParaSpec[], writer: BlockWriter): string {
  const kids = childElements(xml, start);
  const paras = kids.filter(
    (k) =>
      k.name === "p" &&
      paragraphHtml(xml.slice(k.start, k.end))
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

// ---------------------------------------------------------------------------------------------

/** Comment and bookmark ids whose anchors are incomplete in `blocks` (a half or the reference gone). */
function orphanIds(blocks: string[]): { comments: Set<string>; bookmarks: Set<string> } {
  const joined = blocks.join("");
  const ids = (re: RegExp) => new Set([...joined.matchAll(re)].map((m) => m[1]));
  const starts = ids(/<w:commentRangeStart\b[^>]*w:id="([^"]*)"/g);
  const ends = ids(/<w:commentRangeEnd\b[^>]*w:id="([^"]*)"/g);
  const refs = ids(/<w:commentReference\b[^>]*w:id="([^"]*)"/g);
  const bStarts = ids(/<w:bookmarkStart\b[^>]*w:id="([^"]*)"/g);
  const bEnds = ids(/<w:bookmarkEnd\b[^>]*w:id="([^"]*)"/g);
  const all = new Set([...starts, ...ends, ...refs]);
  return {
    comments: new Set([...all].filter((id) => !refs.has(id) || starts.has(id) !== ends.has(id))),
    bookmarks: new Set([...bStarts, ...bEnds].filter((id) => bStarts.has(id) !== bEnds.has(id))),
  };
}

/**
 * Drops the comment anchors and bookmark halves an edit orphaned (a deleted block held the other
 * half or the reference), and every anchor of `removedComments`. Orphans the original already
 * had are left as they were.
 */
function dropOrphanAnchors(blocks: string[], original: string[], removedComments: Set<string>): string[] {
  const before = orphanIds(original);
  const after = orphanIds(blocks);
  const comments = new Set([...after.comments].filter((id) => !before.comments.has(id)));
  for (const id of removedComments) comments.add(id);
  const bookmarks = new Set([...after.bookmarks].filter((id) => !before.bookmarks.has(id)));
  if (comments.size === 0 && bookmarks.size === 0) return blocks;
  return blocks.map((b) =>
    b
      .replace(/<w:comment(?:RangeStart|RangeEnd)\b[^>]*w:id="([^"]*)"[^>]*\/>/g, (m, id: string) =>
        comments.has(id) ? "" : m,
      )
      .replace(
        /<w:r(?:\s[^>]*)?>(?:(?!<\/w:r>)[\s\S])*?<w:commentReference\b[^>]*w:id="([^"]*)"[\s\S]*?<\/w:r>/g,
        (m, id: string) => (comments.has(id) ? "" : m),
      )
      .replace(/<w:bookmark(?:Start|End)\b[^>]*w:id="([^"]*)"[^>]*\/>/g, (m, id: string) =>
        bookmarks.has(id) ? "" : m,
      ),
  );
}

/**
 * Writes `html` (the document's current chunks) into the original package of `source`: see the
 * file comment. Returns the package, the losses worth telling the caller about and where each
 * chunk's blocks are in the output document.xml. Throws when the original is not a readable
 * .docx (the caller then falls back to a generated export).
 */
export async function writeDocxInPlace(
  html: string,
  source: DocumentSource,
  options: InPlaceOptions = {},
): Promise<InPlaceResult> {
  // Unsafe entry names are normalized before anything is read (docx-package-names.ts).
  const pkg = await loadPackage(source.bytes);
  const zip = pkg.zip;
  const read = async (name: string) => zip.file(name)?.async("string");
  const mainPart = mainPartName(await read("_rels/.rels"));
  const documentXml = await read(mainPart);
  if (documentXml === undefined) throw new Error("the original package has no main document part");
  const mainRels = await PartRels.of(zip, mainPart);
  const rels = mainRels.rels;
  const writer = new BlockWriter(headingStyles(await read(`${mainRels.dir}styles.xml`)), mainRels);
  const warnings: string[] = [...pkg.warnings];
  let missingImages = 0;
  // Drawing ids must be unique across the document's parts: new ones are numbered above them all.
  let lastDocPrId: number | undefined;
  /** `xml` of the part `partRels` relates from, with the pictures the edit added to it embedded; saves its relationships. */
  const finishPart = async (partRels: PartRels, xml: string): Promise<string> => {
    const pictures = writer.picturesOf(partRels);
    let out = xml;
    if (pictures.size > 0) {
      lastDocPrId ??= await maxDocPrId(zip);
      const embedded = await pictures.embed(
        zip,
        partRels,
        xml,
        options.images ?? (() => undefined),
        () => textWidthPx(documentXml),
        lastDocPrId,
      );
      lastDocPrId = embedded.lastDocPrId;
      missingImages += embedded.missing;
      out = embedded.xml;
    }
    partRels.save(zip);
    return out;
  };

  const layout = bodyLayout(documentXml);
  const origBlocks = layout.blocks.map((b) => documentXml.slice(b.start, b.end));
  const { chunks } = chunkHtml(html, { sanitize: false });
  const canonical = (h: string) =>
    chunkHtml(h, { sanitize: true })
      .chunks.map((c) => c.html.replace(/^(<[\w-]+) data-chunk-id="[^"]*"/, "$1"))
      .join("\n");
  const untouched = (id: string, current: string) => {
    const loaded = source.loaded[id];
    return loaded !== undefined && (loaded === current || canonical(loaded) === canonical(current));
  };

  // Which original block belongs to which chunk (unowned blocks are written back as they are).
  const owner = new Array<string | null>(origBlocks.length).fill(null);
  for (const [id, span] of Object.entries(source.map.chunks)) {
    if (span.kind !== "block") continue;
    for (let i = span.index; i < span.index + (span.count ?? 1) && i < owner.length; i++) owner[i] = id;
  }
  const current = new Set(chunks.map((c) => c.chunkId));
  const out: string[] = [];
  const outMap: SourceMap = { format: "docx", chunks: {} };
  const emitted = new Set<number>();
  let next = 0;
  const unmappedEdits: { chunkId: string; html: string }[] = [];
  // Blocks of deleted chunks: only a section break survives, on an empty paragraph.
  const emitOriginal = (i: number) => {
    if (emitted.has(i)) return;
    emitted.add(i);
    const id = owner[i];
    if (id === null || current.has(id)) out.push(origBlocks[i]);
    else {
      const sect = sectPrOf(origBlocks[i]);
      if (sect && origBlocks[i].startsWith("<w:p")) out.push(`<w:p><w:pPr>${sect}</w:pPr></w:p>`);
    }
  };
  const emitUpTo = (end: number) => {
    for (; next < end; next++) if (owner[next] === null || !current.has(owner[next] as string)) emitOriginal(next);
  };

  for (const chunk of chunks) {
    const part = partOf(chunk.html);
    if (part === "header" || part === "footer" || part === "comment") continue;
    const span = source.map.chunks[chunk.chunkId] as SourceSpan | undefined;
    let startOut = out.length;
    if (span?.kind === "block" && span.index < origBlocks.length) {
      const count = Math.min(span.count ?? 1, origBlocks.length - span.index);
      if (span.index >= next) emitUpTo(span.index);
      startOut = out.length;
      const own = [...Array(count).keys()].map((k) => span.index + k).filter((i) => owner[i] === chunk.chunkId);
      if (untouched(chunk.chunkId, chunk.html)) {
        for (const i of own) {
          emitted.add(i);
          out.push(origBlocks[i]);
        }
      } else {
        for (const i of own) emitted.add(i);
        out.push(
          ...rewriteChunk(
            writer,
            chunk.html,
            source.loaded[chunk.chunkId],
            own.map((i) => origBlocks[i]),
          ),
        );
      }
      next = Math.max(next, span.index + count);
    } else if (source.loaded[chunk.chunkId] !== undefined) {
      // Came from the file without a block of its own (a text box's text, the notes list): its
      // content lives in blocks written back as they are.
      if (!untouched(chunk.chunkId, chunk.html)) unmappedEdits.push(chunk);
      continue;
    } else {
      out.push(...rewriteChunk(writer, chunk.html, undefined, []));
    }
    if (out.length > startOut) {
      const count = out.length - startOut;
      outMap.chunks[chunk.chunkId] =
        count > 1 ? { kind: "block", index: startOut, count } : { kind: "block", index: startOut };
    }
  }
  emitUpTo(origBlocks.length);
  let rewrittenParts = 0;
  let changedUnmapped = 0;
  // References the edit added, by kind: they name notes the notes parts must then hold.
  const addedRefs = { footnote: [] as string[], endnote: [] as string[] };
  for (const ref of writer.newNoteRefs) {
    const [kind, id] = ref.split(":");
    if (kind === "footnote" || kind === "endnote") addedRefs[kind].push(id);
  }
  const notesParts = new Map<"footnote" | "endnote", string | undefined>();
  const notesPart = async (kind: "footnote" | "endnote") => {
    const target = [...rels.values()].find((r) => r.type.endsWith(`/${kind}s`))?.target;
    if (!notesParts.has(kind)) notesParts.set(kind, target ? await read(target) : undefined);
    return { target, xml: notesParts.get(kind) };
  };
  for (const chunk of unmappedEdits) {
    const kind = partOf(chunk.html);
    if (kind === "footnote" || kind === "endnote") {
      const { target, xml } = await notesPart(kind);
      if (!target || xml === undefined) {
        changedUnmapped++;
        continue;
      }
      const notesRels = await PartRels.of(zip, target);
      writer.rels = notesRels;
      const inBody = new Set(
        [...out.join("").matchAll(new RegExp(`<w:${kind}Reference\\b[^>]*?\\sw:id="([^"]*)"`, "g"))].map((m) => m[1]),
      );
      const notes = editNotes(
        writer,
        kind,
        xml,
        chunk.html,
        source.loaded[chunk.chunkId],
        new Set(addedRefs[kind]),
        inBody,
      );
      writer.rels = mainRels;
      const notesXml = await finishPart(notesRels, notes.xml);
      changedUnmapped += notes.unwritten;
      for (const [from, to] of notes.renamed) {
        const was = noteReferenceRun(kind, from);
        for (let i = 0; i < out.length; i++)
          if (out[i].includes(was)) out[i] = out[i].split(was).join(noteReferenceRun(kind, to));
        addedRefs[kind] = addedRefs[kind].map((id) => (id === from ? to : id));
      }
      notesParts.set(kind, notesXml);
      if (notesXml !== xml) {
        zip.file(target, notesXml);
        rewrittenParts++;
      }
    } else if (!editNestedParagraph(writer, out, chunk.html, source.loaded[chunk.chunkId])) changedUnmapped++;
  }
  let dangling = 0;
  for (const kind of ["footnote", "endnote"] as const)
    if (addedRefs[kind].length > 0)
      dangling += dropDanglingNoteRefs(out, kind, addedRefs[kind], (await notesPart(kind)).xml);
  if (changedUnmapped > 0)
    warnings.push(
      `${changedUnmapped} edited passages (text boxes, notes) could not be written into the original file and keep their original text`,
    );
  if (dangling > 0)
    warnings.push(`${dangling} note references added in an edit name no note of the file and were left out`);

  // Out-of-flow parts: a changed header/footer regenerates its part, a changed comment its entry.
  const files = new Map<string, string>();
  const partChunks = chunks.filter((c) => partOf(c.html) === "header" || partOf(c.html) === "footer");
  const loadedParts = Object.entries(source.loaded).filter(([, h]) => partOf(h) === "header" || partOf(h) === "footer");
  if (loadedParts.length > 0) {
    for (const rel of rels.values()) {
      if (/\/(header|footer)$/.test(rel.type)) {
        const xml = await read(rel.target);
        if (xml !== undefined) files.set(rel.target, xml);
      }
    }
    const refs = partRefs(documentXml, rels, files);
    const rewrites: { target: string; xml: string; lines: ParaSpec[] }[] = [];
    for (const kind of ["header", "footer"] as const) {
      const ofKind = loadedParts.filter(([, h]) => partOf(h) === kind);
      const targets = refs.filter((r) => r.kind === kind);
      ofKind.forEach(([id], i) => {
        const target = targets[i]?.target;
        const now = partChunks.find((c) => c.chunkId === id);
        if (!target || (now && untouched(id, now.html))) return;
        const xml = files.get(target) as string;
        const lines = now ? partLines(now.html) : [{ kind: "p" as const, segments: [] }];
        rewrites.push({ target, xml, lines });
      });
    }
    for (const { target, xml, lines } of rewrites) {
      const partRels = await PartRels.of(zip, target);
      writer.rels = partRels;
      const written = rewriteTextParagraphs(xml, xml.indexOf("<w:", xml.indexOf("?>") + 1), lines, writer);
      zip.file(target, await finishPart(partRels, written));
      rewrittenParts++;
    }
    writer.rels = mainRels;
  }
  const removedComments = new Set<string>();
  const commentChunks = new Map(chunks.filter((c) => partOf(c.html) === "comment").map((c) => [c.chunkId, c.html]));
  const changedComments = new Map<string, string>();
  for (const [id, loaded] of Object.entries(source.loaded)) {
    if (partOf(loaded) !== "comment") continue;
    const commentId = /\sdata-comment-id="([^"]*)"/.exec(loaded)?.[1];
    if (commentId === undefined) continue;
    const now = commentChunks.get(id);
    if (now === undefined) removedComments.add(commentId);
    else if (!untouched(id, now)) changedComments.set(commentId, now);
  }
  if (changedComments.size > 0) {
    const target = [...rels.values()].find((r) => /\/comments$/.test(r.type))?.target;
    let xml = target ? await read(target) : undefined;
    if (target && xml !== undefined) {
      const commentsRels = await PartRels.of(zip, target);
      writer.rels = commentsRels;
      for (const [commentId, now] of changedComments) {
        const at = new RegExp(`<w:comment\\b[^>]*w:id="${commentId.replace(/[^\w-]/g, "")}"`).exec(xml)?.index;
        if (at === undefined) continue;
        xml = rewriteTextParagraphs(xml, at, partLines(now), writer);
      }
      writer.rels = mainRels;
      zip.file(target, await finishPart(commentsRels, xml));
      rewrittenParts++;
    }
  }

  const body = dropOrphanAnchors(out, origBlocks, removedComments);
  const sectPr = layout.sectPr ? documentXml.slice(layout.sectPr.start, layout.sectPr.end) : "";
  const unchanged = body.length === origBlocks.length && body.every((b, i) => b === origBlocks[i]);
  // Pretty-printed originals keep their layout: the gap between blocks is reused.
  const first = layout.blocks[0];
  const lastBlock = layout.blocks[layout.blocks.length - 1];
  const gap = layout.blocks.length > 1 ? documentXml.slice(first.end, layout.blocks[1].start) : "";
  let newDocument = unchanged
    ? documentXml
    : documentXml.slice(0, first ? first.start : layout.contentStart) +
      body.join(/^\s*$/.test(gap) ? gap : "") +
      (lastBlock ? documentXml.slice(lastBlock.end, layout.contentEnd) : sectPr) +
      documentXml.slice(layout.contentEnd);
  newDocument = await finishPart(mainRels, newDocument);
  if (options.page) newDocument = applyPageRequest(newDocument, pageChanges(options.page, docxPageSetup(documentXml)));
  if (options.watermark?.text) {
    newDocument = await addWatermark(zip, mainRels, newDocument, options.watermark);
    rewrittenParts++;
  }
  if (newDocument !== documentXml) zip.file(mainPart, newDocument);
  // Again: the watermark may have related a header since finishPart saved them.
  mainRels.save(zip);
  if (missingImages > 0)
    warnings.push(`${missingImages} images added in an edit could not be written into the Word file and were left out`);
  // Last, so the links an edit wrote are checked too (docx-package-links.ts).
  const unsafe = await dropUnsafeRelationships(zip);
  warnings.push(...unsafe.warnings);
  // Nothing changed: the upload itself, byte for byte (not even re-zipped).
  const touched =
    newDocument !== documentXml || mainRels.changed || rewrittenParts > 0 || pkg.changed || unsafe.changed;
  const bytes = touched ? await zip.generateAsync({ type: "nodebuffer", compression: "DEFLATE" }) : source.bytes;
  return { bytes, warnings, map: outMap };
}

/** The body's block-level children (w:sectPr apart) of a package's main document part, as XML. */
export async function documentBlocks(bytes: Buffer): Promise<string[]> {
  const zip = await JSZip.loadAsync(bytes);
  const xml = (await zip.file(mainPartName(await zip.file("_rels/.rels")?.async("string")))?.async("string")) ?? "";
  return bodyLayout(xml).blocks.map((b) => xml.slice(b.start, b.end));
}

/** The section break (w:sectPr, which may nest a changed w:sectPr) of a paragraph's properties. */
function sectPrOf(xml: string): string | undefined {
  const at = xml.indexOf("<w:sectPr");
  if (at < 0 || !/^<w:sectPr[\s>/]/.test(xml.slice(at, at + 10))) return undefined;
  return xml.slice(at, elementEnd(xml, at));
}

/** The highest drawing id (`wp:docPr`) in any XML part of the package; 0 when there is none. */
async function maxDocPrId(zip: JSZip): Promise<number> {
  let max = 0;
  for (const [name, file] of Object.entries(zip.files)) {
    if (file.dir || !name.endsWith(".xml")) continue;
    for (const m of (await file.async("string")).matchAll(/<wp:docPr\b[^>]*\sid="(\d+)"/g))
      max = Math.max(max, Number(m[1]));
  }
  return max;
}

const norm = (text: string) => text.replace(/\s+/g, " ").trim();
const specText = (spec: ParaSpec) => norm(spec.segments.map((s) => (s.kind === "text" ? s.text : "")).join(""));
const specKey = (spec: BlockSpec) =>
  spec.kind === "p" ? JSON.stringify([spec.heading ?? 0, spec.list ?? null, spec.segments]) : JSON.stringify(spec.rows);

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
function editNestedParagraph(writer: BlockWriter, blocks: string[], html: string, loaded: string | undefined): boolean {
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
  // A text box is written twice (DrawingML and its VML fallback): every copy in one block is edited.
  if (hits.length === 0 || hits.some((h) => h.block !== hits[0].block)) return false;
  let block = blocks[hits[0].block];
  for (const hit of [...hits].reverse()) {
    const written = writer.paragraph(spec, hit.xml, true, false, was.heading === spec.heading);
    block = block.slice(0, hit.at) + written + block.slice(hit.at + hit.xml.length);
  }
  blocks[hits[0].block] = block;
  return true;
}

/** The items of a notes list chunk (`<li id="footnote-N">`) by Word note id, their back links removed. */
function noteItems(html: string | undefined, kind: string): Map<string, string> {
  const out = new Map<string, string>();
  const el = html ? chunkElement(html) : null;
  if (!el) return out;
  for (const li of (el.children as Node[]).filter(isElement)) {
    const id = new RegExp(`^${kind}-(.+)$`).exec(li.attribs.id ?? "")?.[1];
    if (id === undefined) continue;
    const $ = loadHtml(loadHtml("").html(li));
    // Compared, not put in a selector: the id is the document's text and may hold quotes or brackets.
    const backLink = `#${kind}-ref-${id}`;
    $("a")
      .filter((_, a) => $(a).attr("href") === backLink)
      .remove();
    out.set(id, $("li").first().html() ?? "");
  }
  return out;
}

/** The run of a note reference the writer makes: Word's reference style, the note's id. */
function noteReferenceRun(kind: string, id: string): string {
  const style = kind === "footnote" ? "FootnoteReference" : "EndnoteReference";
  return `<w:r><w:rPr><w:rStyle w:val="${style}"/></w:rPr><w:${kind}Reference w:id="${escapeXml(id)}"/></w:r>`;
}

/** Where each note of a notes part starts, by its w:id (separators included). */
function noteStarts(xml: string, kind: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of xml.matchAll(new RegExp(`<w:${kind}\\b[^>]*?\\sw:id="([^"]*)"`, "g"))) out.set(m[1], m.index);
  return out;
}

/** How a new note looks: its paragraphs' properties and the run of its number mark. */
interface NoteShape {
  pPr: string;
  mark: string;
}

/**
 * The shape of the part's last real note (separators apart), so a new note takes the document's
 * own note style; Word's default note styles when the part has no note to copy.
 */
function noteShape(xml: string, kind: string, starts: Map<string, number>): NoteShape {
  const shape = {
    pPr: `<w:pPr><w:pStyle w:val="${kind === "footnote" ? "FootnoteText" : "EndnoteText"}"/></w:pPr>`,
    mark: `<w:r><w:rPr><w:rStyle w:val="${kind === "footnote" ? "FootnoteReference" : "EndnoteReference"}"/></w:rPr><w:${kind}Ref/></w:r>`,
  };
  const ats = [...starts.values()];
  for (let k = ats.length - 1; k >= 0; k--) {
    const note = xml.slice(ats[k], elementEnd(xml, ats[k]));
    if (/^<w:\w+\b[^>]*\sw:type="/.test(note) || !note.includes(`<w:${kind}Ref/>`)) continue;
    shape.pPr = /<w:pPr>[\s\S]*?<\/w:pPr>|<w:pPr\/>/.exec(note)?.[0] ?? shape.pPr;
    const ref = note.indexOf(`<w:${kind}Ref/>`);
    const runStart = Math.max(note.lastIndexOf("<w:r>", ref), note.lastIndexOf("<w:r ", ref));
    const runEnd = note.indexOf("</w:r>", ref);
    if (runStart >= 0 && runEnd >= 0) shape.mark = note.slice(runStart, runEnd + "</w:r>".length);
    break;
  }
  return shape;
}

/** A new note's element holding `lines`: `shape`'s properties on every paragraph, its number mark first. */
function newNoteElement(writer: BlockWriter, kind: string, id: string, lines: ParaSpec[], shape: NoteShape): string {
  // Word separates the mark from the text by a space, unless the mark's run ends in a tab.
  const gap = shape.mark.includes("<w:tab/>") ? "" : '<w:r><w:t xml:space="preserve"> </w:t></w:r>';
  const paragraphs = writer
    .blocks(lines, [], false, false)
    .map(
      (p, i) =>
        `<w:p>${shape.pPr}${i === 0 ? shape.mark + gap : ""}${p.replace(/^<w:p\b[^>]*>(?:<w:pPr>[\s\S]*?<\/w:pPr>|<w:pPr\/>)?/, "")}`,
    );
  return `<w:${kind} w:id="${id}">${paragraphs.join("")}</w:${kind}>`;
}

/**
 * The notes part (`word/footnotes.xml`, `endnotes.xml`) after the edit of its notes list:
 * - a changed item's note gets its text rewritten in place (number mark, anchors and paragraph
 *   properties kept);
 * - an added item that the body refers to (`referenced`, the references the edit added) becomes a
 *   new note, shaped like the part's notes. Its id is the item's when that is a free Word id (a
 *   decimal number), else the next free one, and `renamed` maps the item's id to it so the
 *   caller rewrites the reference;
 * - a removed item's note leaves the part once no reference in the body (`inBody`, ids as written
 *   in the XML) names it.
 * Items that cannot be written this way (added with no reference, removed while still referred
 * to, not found) count as `unwritten`.
 */
function editNotes(
  writer: BlockWriter,
  kind: "footnote" | "endnote",
  xml: string,
  html: string,
  loaded: string | undefined,
  referenced: Set<string>,
  inBody: Set<string>,
): { xml: string; unwritten: number; renamed: Map<string, string> } {
  const now = noteItems(html, kind);
  const before = noteItems(loaded, kind);
  const renamed = new Map<string, string>();
  const linesOf = (item: string) => {
    const li = chunkElement(`<li>${item}</li>`);
    return li ? blockSpecs(li, {}).filter((b): b is ParaSpec => b.kind === "p") : [];
  };
  let unwritten = 0;
  // Removals and rewrites, applied from the part's end back, so the offsets found first stay valid.
  const starts = noteStarts(xml, kind);
  const changes: { at: number; lines?: ParaSpec[] }[] = [];
  for (const id of before.keys()) {
    if (now.has(id)) continue;
    const at = starts.get(id);
    if (at === undefined || inBody.has(escapeXml(id))) unwritten++;
    else changes.push({ at });
  }
  const added: [string, ParaSpec[]][] = [];
  for (const [id, item] of now) {
    const was = before.get(id);
    if (was === item) continue;
    const lines = linesOf(item);
    if (was === undefined) {
      if (referenced.has(id) && lines.length > 0) added.push([id, lines]);
      else unwritten++;
      continue;
    }
    const at = starts.get(id);
    if (at === undefined || lines.length === 0) unwritten++;
    else changes.push({ at, lines });
  }
  let out = xml;
  for (const { at, lines } of changes.sort((a, b) => b.at - a.at))
    out = lines ? rewriteTextParagraphs(out, at, lines, writer) : out.slice(0, at) + out.slice(elementEnd(out, at));
  // Additions go at the part's end, each with a free Word id.
  const close = out.lastIndexOf(`</w:${kind}s>`);
  if (added.length > 0 && close < 0) unwritten += added.length;
  else if (added.length > 0) {
    const ids = noteStarts(out, kind);
    const shape = noteShape(out, kind, ids);
    const taken = new Set(ids.keys());
    let next = Math.max(0, ...[...taken].map(Number).filter(Number.isInteger)) + 1;
    const notes: string[] = [];
    for (const [id, lines] of added) {
      let wordId = id;
      if (!/^\d{1,9}$/.test(id) || taken.has(id)) {
        while (taken.has(String(next))) next++;
        wordId = String(next);
        renamed.set(id, wordId);
      }
      taken.add(wordId);
      notes.push(newNoteElement(writer, kind, wordId, lines, shape));
    }
    out = out.slice(0, close) + notes.join("") + out.slice(close);
  }
  return { xml: out, unwritten, renamed };
}

/**
 * Drops from `blocks` every reference the edit added to a note of `kind` that `part` (the notes
 * part as written, undefined when the file has none) does not hold: Word refuses to open a file
 * whose reference names no note. Returns how many it dropped.
 */
function dropDanglingNoteRefs(blocks: string[], kind: string, added: string[], part: string | undefined): number {
  // Separators (w:type) are notes of the part too, but no reference may name one.
  const held = new Set<string>();
  for (const [id, at] of part === undefined ? [] : noteStarts(part, kind))
    if (!/\sw:type="/.test(part?.slice(at, part.indexOf(">", at)) ?? "")) held.add(id);
  let dropped = 0;
  for (const id of added) {
    if (held.has(id)) continue;
    const run = noteReferenceRun(kind, id);
    for (let i = 0; i < blocks.length; i++) {
      if (!blocks[i].includes(run)) continue;
      dropped += blocks[i].split(run).length - 1;
      blocks[i] = blocks[i].split(run).join("");
    }
  }
  return dropped;
}

/** `written` with the section break of the original paragraph it replaces, if that had one. */
function withSection(written: string, original: string): string {
  const sect = sectPrOf(original);
  if (!sect || written.includes("<w:sectPr")) return written;
  return /<w:pPr>/.test(written)
    ? written.replace(/<\/w:pPr>/, `${sect}</w:pPr>`)
    : written.replace(/^(<w:p\b[^>]*>)/, `$1<w:pPr>${sect}</w:pPr>`);
}

/** The blocks for a changed or new chunk, shaped like its original blocks. */
function rewriteChunk(writer: BlockWriter, html: string, loaded: string | undefined, orig: string[]): string[] {
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
