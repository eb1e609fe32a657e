// Where each chunk of a converted .docx came from: the index of its block among the body's
// block-level children (sources/types.ts, SourceSpan "block"). mammoth drops empty paragraphs and
// folds list paragraphs into ul/ol, so positions cannot be counted afterwards; instead every body
// block is tagged before mammoth with a bookmark (mammoth writes it as `<a id="_rl_bN">`), the
// HTML is chunked, each chunk's anchors give its blocks, and the anchors are stripped.
import { chunkHtml } from "@redline/html-chunks";
import JSZip from "jszip";
import type { SourceMap, SourceSpan } from "../sources/types.js";

/** One block-level child of w:body: `[start, end)` offsets in document.xml and its local name. */
export interface BodyBlock {
  start: number;
  end: number;
  name: string;
}

/** The body of a document.xml: its blocks in order, the final w:sectPr and where the body's content ends. */
export interface BodyLayout {
  /** Namespace prefix of the body element, with its colon ("w:"), or "". */
  prefix: string;
  /** Offset just after `<w:body>`. */
  contentStart: number;
  /** Offset of `</w:body>`. */
  contentEnd: number;
  blocks: BodyBlock[];
  /** The body-level w:sectPr (the last section's properties), when there is one. */
  sectPr: BodyBlock | null;
}

// Any markup token: comments, processing instructions and CDATA are skipped as wholes.
const TOKEN = /<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!\[CDATA\[[\s\S]*?\]\]>|<(\/?)([\w.-]+:)?([\w.-]+)\b[^>]*?(\/?)>/g;

/** Offset just past the element that opens at `start` (its matching close tag). */
export function elementEnd(xml: string, start: number): number {
  TOKEN.lastIndex = start;
  let depth = 0;
  for (let m = TOKEN.exec(xml); m; m = TOKEN.exec(xml)) {
    if (m[3] === undefined) continue;
    if (m[4] === "/") {
      if (depth === 0) return TOKEN.lastIndex;
    } else if (m[1] === "/") {
      depth--;
      if (depth === 0) return TOKEN.lastIndex;
    } else depth++;
  }
  throw new Error("unterminated element in document.xml");
}

/**
 * The body's block-level children (w:p, w:tbl, w:sdt, body-level bookmarks, ...; the final
 * w:sectPr apart). Throws when document.xml has no w:body.
 */
export function bodyLayout(xml: string): BodyLayout {
  const open = /<([\w.-]+:)?body\b[^>]*?(\/?)>/.exec(xml);
  if (!open) throw new Error("document.xml has no body");
  const prefix = open[1] ?? "";
  const contentStart = open.index + open[0].length;
  if (open[2] === "/") return { prefix, contentStart, contentEnd: contentStart, blocks: [], sectPr: null };
  const blocks: BodyBlock[] = [];
  let sectPr: BodyBlock | null = null;
  TOKEN.lastIndex = contentStart;
  for (let m = TOKEN.exec(xml); m; m = TOKEN.exec(xml)) {
    if (m[3] === undefined) continue;
    if (m[1] === "/") return { prefix, contentStart, contentEnd: m.index, blocks, sectPr };
    const start = m.index;
    const end = m[4] === "/" ? TOKEN.lastIndex : elementEnd(xml, start);
    const block = { start, end, name: m[3] };
    if (m[3] === "sectPr") sectPr = block;
    else blocks.push(block);
    TOKEN.lastIndex = end;
  }
  throw new Error("document.xml body is not closed");
}

const ANCHOR_NAME = "_rl_b";
const ANCHOR_ID_BASE = 2_000_000_000;
const ANCHOR_HTML = /<a id="_rl_b(\d+)"><\/a>/g;

/** Offset inside the first paragraph of `xml[start, end)` where a bookmark may go (after its w:pPr), or -1. */
function anchorOffset(xml: string, block: BodyBlock, prefix: string): { at: number; selfClosing: boolean } | null {
  const p = new RegExp(`<${prefix}p(\\s[^>]*?)?(/?)>`, "g");
  p.lastIndex = block.start;
  const m = p.exec(xml);
  if (!m || m.index >= block.end) return null;
  if (m[2] === "/") return { at: m.index, selfClosing: true };
  let at = m.index + m[0].length;
  const pPr = new RegExp(`<${prefix}pPr\\b`, "y");
  pPr.lastIndex = at;
  if (pPr.test(xml)) at = elementEnd(xml, at);
  return { at, selfClosing: false };
}

/**
 * document.xml with a bookmark `_rl_b<index>` opening the first paragraph of every body block
 * (a table's first cell, an sdt's first paragraph). Blocks without a paragraph get none.
 */
export function tagBodyBlocks(xml: string): string {
  const layout = bodyLayout(xml);
  const w = layout.prefix;
  const out: string[] = [];
  let last = 0;
  layout.blocks.forEach((block, index) => {
    const spot = anchorOffset(xml, block, w);
    if (!spot) return;
    const id = ANCHOR_ID_BASE + index;
    const mark = `<${w}bookmarkStart ${w}id="${id}" ${w}name="${ANCHOR_NAME}${index}"/><${w}bookmarkEnd ${w}id="${id}"/>`;
    out.push(xml.slice(last, spot.at));
    if (spot.selfClosing) {
      const tag = /^<[^>]*?\/>/.exec(xml.slice(spot.at))?.[0] ?? "";
      out.push(`${tag.slice(0, -2)}>${mark}</${w}p>`);
      last = spot.at + tag.length;
    } else {
      out.push(mark);
      last = spot.at;
    }
  });
  out.push(xml.slice(last));
  return out.join("");
}

/** The package with its main part replaced (stored, not deflated: mammoth reads it once). */
export async function withMainPart(bytes: Buffer, mainPart: string, xml: string): Promise<Buffer> {
  const zip = await JSZip.loadAsync(bytes);
  zip.file(mainPart, xml);
  return zip.generateAsync({ type: "nodebuffer", compression: "STORE" });
}

/** True when a paragraph of mammoth's HTML holds nothing but block anchors and whitespace. */
export const ANCHORS_ONLY = /<a id="_rl_b\d+"><\/a>/g;

/**
 * Chunks the converted HTML (ids as the documents service will keep them) and maps each in-flow
 * chunk to the body blocks its anchors name: `{index: first, count: last - first + 1}`. Anchors
 * are removed from the returned HTML; chunks left empty by that are dropped.
 */
export function mapChunks(html: string): { html: string; map: SourceMap } {
  const { chunks } = chunkHtml(html);
  const map: SourceMap = { format: "docx", chunks: {} };
  const kept: string[] = [];
  for (const chunk of chunks) {
    const indices = [...chunk.html.matchAll(ANCHOR_HTML)].map((m) => Number(m[1]));
    const clean = chunk.html.replace(ANCHOR_HTML, "");
    if (indices.length > 0 && /^<(p|h[1-6])\b[^>]*>(?:\s|&nbsp;|\u00a0|<br>)*<\/\1>$/.test(clean)) continue;
    kept.push(clean);
    if (indices.length === 0 || /^<[\w-]+[^>]*\sdata-part="/.test(clean)) continue;
    const first = Math.min(...indices);
    const last = Math.max(...indices);
    const span: SourceSpan =
      last > first ? { kind: "block", index: first, count: last - first + 1 } : { kind: "block", index: first };
    map.chunks[chunk.chunkId] = span;
  }
  return { html: kept.join("\n"), map };
}
