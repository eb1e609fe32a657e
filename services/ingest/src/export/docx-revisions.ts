// Word tracked changes (issue #12): writes a document's edits since a version into a .docx body
// as revisions (w:ins / w:del with author and date) so the user accepts or rejects them in
// Word. Works on any document.xml whose body blocks are mapped to chunks: the generated export
// (to-docx.ts) and the in-place writer of loaded .docx files report the same SourceMap.
import { type Cheerio, type CheerioAPI, load } from "cheerio";
import { diffArrays } from "diff";
import JSZip from "jszip";
import type { DomElement as Element } from "../html/util.js";
import type { SourceMap, SourceSpan } from "../sources/types.js";
import { writeZip } from "./zip-writer.js";

/** One chunk edited since the base version, as the revision writer takes it. */
export interface TrackedChangeInput {
  chunkId: string;
  kind: "modified" | "inserted" | "deleted";
  /** The chunk's HTML at the base version ("" when inserted). */
  baseHtml: string;
  /** Deleted chunks: the still-present chunk it followed ("" = the start of the document). */
  afterChunkId: string;
  /** w:author of the revision: who made the latest version touching the chunk. */
  author: string;
  /** w:date of the revision: when that version was committed. */
  date: Date;
}

/** What applyRevisions wrote: the new document.xml and the next free revision id. */
export interface RevisionsResult {
  xml: string;
  nextId: number;
  /** Chunks whose change could not be placed (their block is missing from the map). */
  skipped: string[];
}

const XML_OPTIONS = { xml: { xmlMode: true, decodeEntities: true } } as const;
/** Block-level HTML elements a chunk's text is split by (one Word paragraph each). */
const HTML_BLOCKS = new Set([
  "p",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "li",
  "ul",
  "ol",
  "div",
  "blockquote",
  "pre",
  "table",
  "thead",
  "tbody",
  "tfoot",
  "tr",
  "td",
  "th",
  "figure",
  "figcaption",
  "section",
  "article",
  "dl",
  "dt",
  "dd",
]);
/** Run containers whose runs are revised in place (the container itself stays). */
const RUN_CONTAINERS = new Set(["w:hyperlink", "w:smartTag", "w:fldSimple", "w:customXml"]);

/** Attributes of one revision mark. */
interface Rev {
  author: string;
  date: string;
}

const escapeAttr = (s: string) =>
  s.replaceAll("&", "&amp;").replaceAll('"', "&quot;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
const escapeText = (s: string) => s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
/** Word writes revision dates without fractions of a second. */
const wordDate = (value: Date | string) => {
  // A job stored as JSON (email exports) carries the date as a string.
  const d = new Date(value);
  return `${(Number.isNaN(d.getTime()) ? new Date(0) : d).toISOString().slice(0, 19)}Z`;
};

const elementChildren = (el: Element): Element[] => el.children.filter((c): c is Element => c.type === "tag");

/** The text of one HTML block as Word shows it: whitespace collapsed, trimmed. */
function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/**
 * The paragraph texts a chunk's HTML becomes in Word, in order: every leaf block (a block with no
 * block children) gives one; a block's own text beside block children gives one before them.
 */
export function htmlParagraphTexts(html: string): string[] {
  const $ = load(html, null, false);
  const out: string[] = [];
  const walk = (el: Element) => {
    const blocks = elementChildren(el).filter((c) => HTML_BLOCKS.has(c.name));
    if (blocks.length === 0) {
      out.push(collapse($(el).text()));
      return;
    }
    // Text outside the child blocks (e.g. an item's text before its nested list).
    const own = el.children
      .filter((c) => !(c.type === "tag" && HTML_BLOCKS.has((c as Element).name)))
      .map((c) => $(c).text())
      .join("");
    if (collapse(own)) out.push(collapse(own));
    for (const b of blocks) {
      // Row groups and rows are structure, not paragraphs.
      walk(b);
    }
  };
  for (const root of $.root().children().toArray()) if (root.type === "tag") walk(root as Element);
  return out;
}

/**
 * Writes `changes` into `documentXml` as revisions. `map` gives each chunk's blocks among the
 * body's children (w:sectPr excluded) in THIS document.xml. Modified chunks get a word-level
 * diff of each paragraph against the base text (unchanged words keep their runs, deleted words
 * become w:del runs with the neighbouring formatting, inserted ones are wrapped in w:ins);
 * inserted chunks have every run and paragraph mark inserted (table rows via w:trPr/w:ins);
 * deleted chunks that are in the map are marked deleted the same way, and those that are not are
 * re-inserted after their anchor as deleted paragraphs of their base text. Revision ids start at
 * `firstId` (callers pass one above every w:id of the package).
 */
export function applyRevisions(
  documentXml: string,
  map: SourceMap,
  changes: TrackedChangeInput[],
  firstId = 1,
): RevisionsResult {
  const $ = load(documentXml, XML_OPTIONS);
  const body = $("w\\:body").get(0);
  if (!body) return { xml: documentXml, nextId: firstId, skipped: changes.map((c) => c.chunkId) };
  const blocks = elementChildren(body).filter((el) => el.name !== "w:sectPr");
  let nextId = firstId;
  const skipped: string[] = [];
  const mark = (tag: "w:ins" | "w:del", rev: Rev) =>
    `<${tag} w:id="${nextId++}" w:author="${escapeAttr(rev.author)}" w:date="${rev.date}"/>`;
  const blocksOf = (span: SourceSpan | undefined): Element[] => {
    if (span?.kind !== "block") return [];
    return blocks.slice(span.index, span.index + (span.count ?? 1));
  };
  // The last node placed after each anchor, so deleted chunks sharing one keep their order.
  const placedAfter = new Map<string, Element>();

  for (const change of changes) {
    const rev: Rev = { author: change.author || "Redline", date: wordDate(change.date) };
    const own = blocksOf(map.chunks[change.chunkId]);
    if (change.kind === "inserted" || (change.kind === "deleted" && own.length > 0)) {
      if (own.length === 0) {
        skipped.push(change.chunkId);
        continue;
      }
      const tag = change.kind === "inserted" ? "w:ins" : "w:del";
      for (const block of own) markWholeBlock($, block, tag, rev, mark);
      continue;
    }
    if (change.kind === "deleted") {
      const paragraphs = htmlParagraphTexts(change.baseHtml).map((text) => deletedParagraph(text, rev, mark));
      if (paragraphs.length === 0) continue;
      const anchorBlocks = blocksOf(map.chunks[change.afterChunkId]);
      const after = placedAfter.get(change.afterChunkId) ?? anchorBlocks[anchorBlocks.length - 1];
      const nodes = $(paragraphs.join(""));
      if (after) $(after).after(nodes);
      else if (blocks[0]) $(blocks[0]).before(nodes);
      else $(body).prepend(nodes);
      const last = nodes.get(nodes.length - 1);
      if (last) placedAfter.set(change.afterChunkId, last as Element);
      continue;
    }
    // Modified: paragraph by paragraph when the shape is the same, else old out, new in.
    if (own.length === 0) {
      skipped.push(change.chunkId);
      continue;
    }
    const current = own.flatMap((block) => (block.name === "w:p" ? [block] : $(block).find("w\\:p").toArray()));
    const base = htmlParagraphTexts(change.baseHtml);
    if (base.length === current.length) {
      current.forEach((p, i) => {
        reviseParagraph($, p, base[i], rev, mark);
      });
    } else {
      for (const p of current) markParagraph($, p, "w:ins", rev, mark);
      const removed = base.map((text) => deletedParagraph(text, rev, mark)).join("");
      if (removed) $(own[0]).before(removed);
    }
  }
  return { xml: $.xml(), nextId, skipped };
}

type Mark = (tag: "w:ins" | "w:del", rev: Rev) => string;

/** A whole block (paragraph or table) inserted or deleted: its rows, runs and paragraph marks. */
function markWholeBlock($: CheerioAPI, block: Element, tag: "w:ins" | "w:del", rev: Rev, mark: Mark): void {
  if (block.name === "w:p") {
    markParagraph($, block, tag, rev, mark);
    return;
  }
  // Rows first: a table (even nested) is inserted or deleted row by row.
  $(block)
    .find("w\\:tr")
    .addBack("w\\:tr")
    .each((_, tr) => {
      const row = $(tr);
      let trPr = row.children("w\\:trPr");
      if (trPr.length === 0) {
        const tblPrEx = row.children("w\\:tblPrEx");
        if (tblPrEx.length > 0) tblPrEx.after("<w:trPr/>");
        else row.prepend("<w:trPr/>");
        trPr = row.children("w\\:trPr");
      }
      // w:ins / w:del close CT_TrPr, before a w:trPrChange.
      const change = trPr.children("w\\:trPrChange");
      if (change.length > 0) change.before(mark(tag, rev));
      else trPr.append(mark(tag, rev));
    });
  $(block)
    .find("w\\:p")
    .each((_, p) => {
      markParagraph($, p as Element, tag, rev, mark);
    });
}

/** The paragraph's w:pPr, created first when missing. */
function paragraphProperties($: CheerioAPI, p: Element): Cheerio<Element> {
  let pPr = $(p).children("w\\:pPr");
  if (pPr.length === 0) {
    $(p).prepend("<w:pPr/>");
    pPr = $(p).children("w\\:pPr");
  }
  return pPr;
}

/** Marks the paragraph mark inserted or deleted (w:pPr/w:rPr/w:ins|w:del, first in the rPr). */
function markParagraphMark($: CheerioAPI, p: Element, tag: "w:ins" | "w:del", rev: Rev, mark: Mark): void {
  const pPr = paragraphProperties($, p);
  let rPr = pPr.children("w\\:rPr");
  if (rPr.length === 0) {
    // CT_PPr ends with rPr, sectPr, pPrChange.
    const tail = pPr.children("w\\:sectPr, w\\:pPrChange").first();
    if (tail.length > 0) tail.before("<w:rPr/>");
    else pPr.append("<w:rPr/>");
    rPr = pPr.children("w\\:rPr");
  }
  rPr.prepend(mark(tag, rev));
}

/** Turns a run's text into deleted text (w:t → w:delText, w:instrText → w:delInstrText). */
function toDeletedRun(run: Element): void {
  for (const child of elementChildren(run)) {
    if (child.name === "w:t") child.name = "w:delText";
    else if (child.name === "w:instrText") child.name = "w:delInstrText";
  }
}

/** Every run of the paragraph (also inside hyperlinks and the like) and its mark inserted or deleted. */
function markParagraph($: CheerioAPI, p: Element, tag: "w:ins" | "w:del", rev: Rev, mark: Mark): void {
  markRunsIn($, p, tag, rev, mark);
  markParagraphMark($, p, tag, rev, mark);
}

/** Wraps each stretch of consecutive runs of `container` in one w:ins / w:del. */
function markRunsIn($: CheerioAPI, container: Element, tag: "w:ins" | "w:del", rev: Rev, mark: Mark): void {
  let group: Element[] = [];
  const flush = () => {
    if (group.length === 0) return;
    const wrapper = $(mark(tag, rev));
    $(group[0]).before(wrapper);
    for (const run of group) {
      if (tag === "w:del") toDeletedRun(run);
      wrapper.append(run);
    }
    group = [];
  };
  for (const child of [...container.children]) {
    if (child.type !== "tag") continue;
    const el = child as Element;
    if (el.name === "w:r") group.push(el);
    else {
      flush();
      if (RUN_CONTAINERS.has(el.name)) markRunsIn($, el, tag, rev, mark);
    }
  }
  flush();
}

/** A deleted paragraph holding `text` (one run, no formatting). */
function deletedParagraph(text: string, rev: Rev, mark: Mark): string {
  const pMark = mark("w:del", rev);
  const run = text
    ? `${mark("w:del", rev).replace("/>", ">")}<w:r><w:delText xml:space="preserve">${escapeText(text)}</w:delText></w:r></w:del>`
    : "";
  return `<w:p><w:pPr><w:rPr>${pMark}</w:rPr></w:pPr>${run}</w:p>`;
}

/** A run of the paragraph with its text and where that text sits in the paragraph's text. */
interface RunText {
  run: Element;
  start: number;
  end: number;
  /** Only w:rPr and w:t children: the run can be split at any character. */
  splittable: boolean;
}

/** The paragraph's runs in order (direct ones and those in run containers), with their text ranges. */
function runTexts(p: Element): { runs: RunText[]; text: string } {
  const runs: RunText[] = [];
  let text = "";
  const visit = (container: Element) => {
    for (const child of elementChildren(container)) {
      if (child.name === "w:r") {
        const parts = elementChildren(child);
        const t = parts
          .filter((c) => c.name === "w:t")
          .map((c) => textOf(c))
          .join("");
        runs.push({
          run: child,
          start: text.length,
          end: text.length + t.length,
          splittable: parts.every((c) => c.name === "w:rPr" || c.name === "w:t"),
        });
        text += t;
      } else if (RUN_CONTAINERS.has(child.name)) visit(child);
    }
  };
  visit(p);
  return { runs, text };
}

function textOf(el: Element): string {
  return el.children.map((c) => (c.type === "text" ? (c as unknown as { data: string }).data : "")).join("");
}

/** Words, runs of whitespace, and single other characters. */
const TOKEN = /[\p{L}\p{N}\p{M}_]+|\s+|[^\s]/gu;
const tokenize = (s: string) => s.match(TOKEN) ?? [];
const isSpace = (t: string) => /^\s+$/.test(t);

/** The word-level edit of a paragraph's text: ranges of the current text, and deletions at points. */
interface TextEdit {
  /** Half-open ranges of the current text that are new. */
  inserted: [number, number][];
  /** Base text removed at a point of the current text, in order. */
  deleted: { at: number; text: string }[];
}

/** Word diff of base → current text; whitespace-only differences do not count. */
export function wordEdit(base: string, current: string): TextEdit {
  const a = tokenize(base);
  const b = tokenize(current);
  const parts = diffArrays(a, b, { comparator: (x, y) => x === y || (isSpace(x) && isSpace(y)) });
  const edit: TextEdit = { inserted: [], deleted: [] };
  let at = 0;
  let ib = 0;
  for (const part of parts) {
    if (part.removed) {
      const text = part.value.join("");
      if (text.trim()) edit.deleted.push({ at, text });
      continue;
    }
    // Lengths come from the current tokens: a common whitespace token may differ from the base's.
    const from = at;
    at += b.slice(ib, ib + part.count).join("").length;
    ib += part.count;
    if (part.added && current.slice(from, at).trim()) edit.inserted.push([from, at]);
  }
  return edit;
}

/**
 * Rewrites a paragraph whose text went from `base` to its current text: unchanged stretches keep
 * their runs, new words are wrapped in w:ins, removed words are put back as w:del runs with the
 * formatting of the run they were removed from (or the one before). False when nothing differs.
 */
function reviseParagraph($: CheerioAPI, p: Element, base: string, rev: Rev, mark: Mark): boolean {
  const { runs, text } = runTexts(p);
  if (collapse(text) === collapse(base)) return false;
  const edit = wordEdit(base, text);
  if (edit.inserted.length === 0 && edit.deleted.length === 0) return false;
  const isInserted = (i: number) => edit.inserted.some(([s, e]) => i >= s && i < e);
  const deletedRun = (source: Element | undefined, removed: string) => {
    const rPr = source ? $(source).children("w\\:rPr").first() : null;
    const props = rPr && rPr.length > 0 ? $.xml(rPr) : "";
    return `${mark("w:del", rev).replace("/>", ">")}<w:r>${props}<w:delText xml:space="preserve">${escapeText(removed)}</w:delText></w:r></w:del>`;
  };
  let pending = [...edit.deleted];
  const takeDeletions = (upTo: number, inclusive: boolean) => {
    const now = pending.filter((d) => (inclusive ? d.at <= upTo : d.at < upTo));
    pending = pending.filter((d) => !now.includes(d));
    return now;
  };

  for (const [ri, r] of runs.entries()) {
    const isLast = ri === runs.length - 1;
    const pieces: string[] = [];
    if (!r.splittable || r.start === r.end) {
      for (const d of takeDeletions(r.start, true)) pieces.push(deletedRun(r.run, d.text));
      const original = $.xml(r.run);
      pieces.push(
        r.start < r.end && isInserted(r.start)
          ? `${mark("w:ins", rev).replace("/>", ">")}${original}</w:ins>`
          : original,
      );
      if (isLast) for (const d of takeDeletions(Number.POSITIVE_INFINITY, true)) pieces.push(deletedRun(r.run, d.text));
      $(r.run).replaceWith(pieces.join(""));
      continue;
    }
    // Cut points: where the inserted state flips and where deletions go, inside this run.
    const cuts = new Set<number>([r.start, r.end]);
    for (const [s, e] of edit.inserted) for (const x of [s, e]) if (x > r.start && x < r.end) cuts.add(x);
    for (const d of pending) if (d.at > r.start && d.at < r.end) cuts.add(d.at);
    const points = [...cuts].sort((x, y) => x - y);
    const rPr = $(r.run).children("w\\:rPr").first();
    const props = rPr.length > 0 ? $.xml(rPr) : "";
    const runAttrs = Object.entries(r.run.attribs)
      .map(([k, v]) => ` ${k}="${escapeAttr(v)}"`)
      .join("");
    for (let i = 0; i < points.length - 1; i++) {
      const [s, e] = [points[i], points[i + 1]];
      for (const d of takeDeletions(s, true)) pieces.push(deletedRun(r.run, d.text));
      const piece = `<w:r${runAttrs}>${props}<w:t xml:space="preserve">${escapeText(text.slice(s, e))}</w:t></w:r>`;
      pieces.push(isInserted(s) ? `${mark("w:ins", rev).replace("/>", ">")}${piece}</w:ins>` : piece);
    }
    if (isLast) for (const d of takeDeletions(Number.POSITIVE_INFINITY, true)) pieces.push(deletedRun(r.run, d.text));
    $(r.run).replaceWith(pieces.join(""));
  }
  // A paragraph that lost all its text: the removed words go where its runs were.
  if (pending.length > 0) $(p).append(pending.map((d) => deletedRun(undefined, d.text)).join(""));
  return true;
}

/** The highest numeric w:id in any XML part of the package (revision ids must not collide). */
export async function maxWordId(zip: JSZip): Promise<number> {
  let max = 0;
  for (const file of Object.values(zip.files)) {
    if (file.dir || !file.name.endsWith(".xml")) continue;
    const xml = await file.async("string");
    for (const m of xml.matchAll(/\bw:id="(-?\d+)"/g)) max = Math.max(max, Number(m[1]));
  }
  return max;
}

/**
 * applyRevisions on the word/document.xml of a .docx package; returns the new package bytes and
 * the chunks that could not be placed. Ids start above every w:id already in the package.
 */
export async function applyRevisionsToDocx(
  docx: Buffer,
  map: SourceMap,
  changes: TrackedChangeInput[],
): Promise<{ bytes: Buffer; skipped: string[] }> {
  if (changes.length === 0) return { bytes: docx, skipped: [] };
  const zip = await JSZip.loadAsync(docx);
  const entry = zip.file("word/document.xml");
  if (!entry) return { bytes: docx, skipped: changes.map((c) => c.chunkId) };
  const firstId = (await maxWordId(zip)) + 1;
  const result = applyRevisions(await entry.async("string"), map, changes, firstId);
  zip.file("word/document.xml", result.xml);
  const bytes = await writeZip(zip);
  return { bytes, skipped: result.skipped };
}
