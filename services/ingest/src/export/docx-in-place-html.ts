// Export to .docx in place (docx-in-place.ts), the HTML side: a chunk's HTML as the paragraphs
// and tables Word will hold (ParaSpec, TableSpec), which docx-in-place-writer.ts writes in the
// original's vocabulary; and whether a chunk is untouched since it was loaded.
import { BLOCK_LEVEL_TAGS, type ChunkRecord, chunkHtml } from "@redline/html-chunks";
import type { RunFormat, Segment } from "../docx/xml.js";
import { loadHtml } from "../html/util.js";
import type { DocumentSource } from "../sources/types.js";

export type Node = ReturnType<ReturnType<typeof loadHtml>>[number];
type El = Extract<Node, { attribs: Record<string, string> }>;

export interface ParaSpec {
  kind: "p";
  heading?: number;
  list?: { ordered: boolean; level: number };
  segments: HtmlSegment[];
}
export interface TableSpec {
  kind: "table";
  rows: { cells: { html: string; blocks: BlockSpec[] }[] }[];
}
export type BlockSpec = ParaSpec | TableSpec;
type HtmlSegment = Segment | { kind: "image"; html: string } | { kind: "note"; note: string };

export function isElement(node: Node): node is El {
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

/**
 * The chunk element as paragraph and table specs, in order. A block child (the chunker's
 * BLOCK_LEVEL_TAGS) starts a paragraph of its own; inline content between blocks is one too.
 */
export function blockSpecs(
  el: El,
  ctx: { list?: { ordered: boolean; level: number }; heading?: number; pre?: boolean },
): BlockSpec[] {
  const name = el.name;
  if (name === "table") return [tableSpec(el)];
  if (name === "ul" || name === "ol") {
    // `data-ilvl`: the Word level of a list whose level the HTML nesting cannot say (a skipped level).
    const own = Number.parseInt(el.attribs["data-ilvl"] ?? "", 10);
    const level = Number.isInteger(own) && own >= 0 && own <= 8 ? own : ctx.list ? ctx.list.level + 1 : 0;
    return (el.children as Node[])
      .filter(isElement)
      .flatMap((li) => blockSpecs(li, { list: { ordered: name === "ol", level } }));
  }
  const heading = /^h([1-6])$/.exec(name) ? Number(name.slice(1)) : ctx.heading;
  const pre = ctx.pre || name === "pre";
  const kids = el.children as Node[];
  if (name === "hr") return [{ kind: "p", segments: [] }];
  if (!kids.some((k) => isElement(k) && BLOCK_LEVEL_TAGS.has(k.name))) {
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
    if (isElement(kid) && BLOCK_LEVEL_TAGS.has(kid.name)) {
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

export function chunkElement(html: string): El | null {
  const $ = loadHtml(html);
  return ($.root().children().toArray() as Node[]).find(isElement) ?? null;
}

/** Cell HTML of a table chunk, by row and column (how the document was loaded). */
export function tableCells(html: string | undefined): string[][] | null {
  const el = html ? chunkElement(html) : null;
  if (el?.name !== "table") return null;
  return tableSpec(el).rows.map((r) => r.cells.map((c) => c.html));
}

/** Lines of a part chunk (`<p data-part>a<br>b</p>`) as paragraph specs. */
export function partLines(html: string): ParaSpec[] {
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

/** A paragraph text compared across the HTML and the XML: whitespace runs as one space, trimmed. */
export const norm = (text: string) => text.replace(/\s+/g, " ").trim();
export const specText = (spec: ParaSpec) => norm(spec.segments.map((s) => (s.kind === "text" ? s.text : "")).join(""));
export const specKey = (spec: BlockSpec) =>
  spec.kind === "p" ? JSON.stringify([spec.heading ?? 0, spec.list ?? null, spec.segments]) : JSON.stringify(spec.rows);

/** Whether the chunk `id` is `current` as it was loaded (equal, or equal once both are sanitized). */
export type Untouched = (id: string, current: string) => boolean;

/** The untouched test of chunks loaded from `source`. */
export function untouchedIn(source: DocumentSource): Untouched {
  const canonical = (h: string) =>
    chunkHtml(h, { sanitize: true })
      .chunks.map((c) => c.html.replace(/^(<[\w-]+) data-chunk-id="[^"]*"/, "$1"))
      .join("\n");
  return (id, current) => {
    const loaded = source.loaded[id];
    return loaded !== undefined && (loaded === current || canonical(loaded) === canonical(current));
  };
}

/** A chunk as the writer sees it: its id and current HTML. */
export type Chunk = Pick<ChunkRecord, "chunkId" | "html">;
