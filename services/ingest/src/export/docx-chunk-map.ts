// Which body blocks each chunk became in a generated .docx: before the build every in-flow chunk
// gets an invisible marker (private-use characters around its ordinal) at the start of its first
// text; after it the markers are found in word/document.xml, give each chunk its block range, and
// are removed. What tracked changes are written against (docx-revisions.ts).
import { sanitizeHtml } from "@redline/html-chunks";
import { type CheerioAPI, load } from "cheerio";
import type { DomNode as AnyNode, DomElement as Element } from "../html/util.js";
import type { SourceMap } from "../sources/types.js";

const OPEN = "\uE000";
const CLOSE = "\uE001";
const MARKER = /\uE000(\d+)\uE001/g;
/** Elements whose first block child, not they themselves, holds the start of their text. */
const CONTAINERS = new Set([
  "table",
  "thead",
  "tbody",
  "tfoot",
  "tr",
  "td",
  "th",
  "ul",
  "ol",
  "li",
  "div",
  "blockquote",
  "figure",
  "section",
  "article",
  "dl",
  "dd",
  "dt",
]);
const BLOCKS = new Set([...CONTAINERS, "p", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "figcaption", "hr"]);
const VOID = new Set(["hr", "img", "br"]);

const isElement = (n: AnyNode): n is Element => n.type === "tag";

/** Top-level chunk elements: those with data-chunk-id and no such ancestor. */
function chunkElements($: CheerioAPI): Element[] {
  return $("[data-chunk-id]")
    .toArray()
    .filter((el) => $(el).parents("[data-chunk-id]").length === 0);
}

/** Where a chunk's marker goes: the element holding the start of its first paragraph; null for void ones. */
function markerHost(el: Element): Element | null {
  let host = el;
  for (;;) {
    if (VOID.has(host.name)) return null;
    const ownText = host.children.some((c) => c.type === "text" && c.data.trim() !== "");
    const first = host.children.find((c) => isElement(c) || (c.type === "text" && c.data.trim() !== ""));
    if (ownText || !first || !isElement(first) || !BLOCKS.has(first.name)) return host;
    if (!CONTAINERS.has(host.name) && !BLOCKS.has(first.name)) return host;
    host = first;
  }
}

/** A body ready to build: deleted chunks put back at their place, every chunk marked. */
export interface MarkedBody {
  html: string;
  /** Chunk ids by marker ordinal. */
  chunkIds: string[];
  /**
   * Chunks with no text to mark (a rule, a lone image), by the marker ordinal they follow (-1:
   * before the first): each is taken to be one block, at the end of that chunk's range.
   */
  unmarked: Record<number, string[]>;
}

/**
 * Puts each `deleted` chunk's base HTML (sanitized) back after the chunk it followed ("" = at the
 * start), so it is built with its own styles and then marked deleted, and prefixes every chunk's
 * first text with its marker.
 */
export function markChunks(
  bodyHtml: string,
  deleted: { chunkId: string; baseHtml: string; afterChunkId: string }[],
): MarkedBody {
  const $ = load(bodyHtml, null, false);
  const byId = new Map(chunkElements($).map((el) => [el.attribs["data-chunk-id"], el]));
  const lastAfter = new Map<string, Element>();
  for (const d of deleted) {
    if (byId.has(d.chunkId)) continue;
    const nodes = $(sanitizeHtml(d.baseHtml)).filter((_, n) => isElement(n));
    if (nodes.length === 0) continue;
    nodes.first().attr("data-chunk-id", d.chunkId);
    const anchor = lastAfter.get(d.afterChunkId) ?? byId.get(d.afterChunkId);
    if (anchor) $(anchor).after(nodes);
    else {
      const first = chunkElements($)[0];
      if (first) $(first).before(nodes);
      else $.root().append(nodes);
    }
    const last = nodes.get(nodes.length - 1);
    if (last) lastAfter.set(d.afterChunkId, last as Element);
    byId.set(d.chunkId, nodes.get(0) as Element);
  }
  const chunkIds: string[] = [];
  const unmarked: Record<number, string[]> = {};
  for (const el of chunkElements($)) {
    const host = markerHost(el);
    const id = el.attribs["data-chunk-id"];
    if (!host) {
      const after = chunkIds.length - 1;
      unmarked[after] = [...(unmarked[after] ?? []), id];
      continue;
    }
    $(host).prepend(`${OPEN}${chunkIds.length}${CLOSE}`);
    chunkIds.push(id);
  }
  return { html: $.html(), chunkIds, unmarked };
}

/**
 * Finds the markers in a built document.xml: each chunk's first block (among the body's
 * children, w:sectPr excluded) and its range up to the next chunk's. Returns the XML without the
 * markers (runs left empty by them removed) and the chunk → blocks map.
 */
export function locateChunks(
  documentXml: string,
  chunkIds: string[],
  unmarked: Record<number, string[]> = {},
): { xml: string; map: SourceMap } {
  const $ = load(documentXml, { xml: { xmlMode: true, decodeEntities: true } });
  const body = $("w\\:body").get(0);
  const map: SourceMap = { format: "docx", chunks: {} };
  if (!body) return { xml: documentXml, map };
  const blocks = body.children.filter((c): c is Element => isElement(c) && c.name !== "w:sectPr");
  const starts: { chunkId: string; ordinal: number; index: number }[] = [];
  blocks.forEach((block, index) => {
    $(block)
      .find("w\\:t")
      .each((_, t) => {
        const text = $(t).text();
        if (!text.includes(OPEN)) return;
        for (const m of text.matchAll(MARKER)) {
          const chunkId = chunkIds[Number(m[1])];
          if (chunkId !== undefined && !starts.some((s) => s.chunkId === chunkId))
            starts.push({ chunkId, ordinal: Number(m[1]), index });
        }
        const rest = text.replace(MARKER, "");
        const run = $(t).parent("w\\:r");
        if (rest === "" && run.children().not("w\\:rPr").length === 1) run.remove();
        else $(t).text(rest);
      });
  });
  starts.sort((a, b) => a.index - b.index);
  // Unmarked chunks take one block each at the end of the range they fall in, when it has room.
  const placeUnmarked = (ids: string[] | undefined, end: number, room: number): number => {
    if (!ids || ids.length > room) return 0;
    ids.forEach((id, k) => {
      map.chunks[id] = { kind: "block", index: end - ids.length + k, count: 1 };
    });
    return ids.length;
  };
  placeUnmarked(unmarked[-1], starts[0]?.index ?? blocks.length, starts[0]?.index ?? blocks.length);
  starts.forEach((s, i) => {
    const next = starts.slice(i + 1).find((n) => n.index > s.index)?.index ?? blocks.length;
    const taken = placeUnmarked(unmarked[s.ordinal], next, next - s.index - 1);
    map.chunks[s.chunkId] = { kind: "block", index: s.index, count: Math.max(1, next - s.index - taken) };
  });
  return { xml: $.xml(), map };
}

/** A marker as it may appear in any XML part: raw or as a character reference. */
const MARKER_IN_XML = /(?:\uE000|&#x[eE]000;|&#57344;)\d+(?:\uE001|&#x[eE]001;|&#57345;)/g;

/** Removes markers a part other than the body kept (a chunk docx/html placed elsewhere). */
export function stripMarkers(xml: string): string {
  return xml.replace(MARKER_IN_XML, "");
}
