// Word list numbering, which mammoth leaves out: where each list starts (`<ol start="17">`), how
// it counts (`type="a" | "A" | "i" | "I"` from the level's w:numFmt), and which items belong to
// which list. Word numbers each paragraph from numbering.xml (the level's w:start, a num's
// w:startOverride, counters shared by the nums of one abstractNum, deeper levels restarting under
// a shallower one); mammoth writes one <li> per list paragraph in body order, so the n-th <li> is
// the n-th numbered paragraph. When the counts disagree (numbering from styles, text boxes written
// twice) no number is changed: no start is better than a wrong one.
import type * as cheerio from "cheerio";
import { type DomElement, findAll, loadHtml } from "../html/util.js";

interface LevelDef {
  start: number;
  format: string;
}

/** What Word shows on one list paragraph: its list, level, number and number format. */
export interface ListParagraph {
  numId: string;
  ilvl: number;
  /** The number Word shows (also counted for bullets, where it is not shown). */
  value: number;
  /** The level's w:numFmt: "decimal", "bullet", "lowerLetter", "upperRoman", ... */
  format: string;
}

// w:numFmt → the HTML `type` of an `<ol>` (decimal needs none; formats HTML has no type for,
// such as ordinal or chineseCounting, stay decimal).
const OL_TYPES = new Map([
  ["lowerLetter", "a"],
  ["upperLetter", "A"],
  ["lowerRoman", "i"],
  ["upperRoman", "I"],
]);

function attrVal(xml: string, element: string): string | undefined {
  return new RegExp(`<w:${element}\\b[^>]*\\bw:val="([^"]*)"`).exec(xml)?.[1];
}

/** abstractNumId → ilvl → level; numId → {abstract, overrides}. */
function parseNumbering(numberingXml: string) {
  const abstracts = new Map<string, Map<number, LevelDef>>();
  for (const a of numberingXml.match(/<w:abstractNum\b[\s\S]*?<\/w:abstractNum>/g) ?? []) {
    const id = /w:abstractNumId="(\d+)"/.exec(a)?.[1];
    if (!id) continue;
    const levels = new Map<number, LevelDef>();
    for (const lvl of a.match(/<w:lvl\b[\s\S]*?<\/w:lvl>/g) ?? []) {
      const ilvl = Number(/w:ilvl="(\d+)"/.exec(lvl)?.[1] ?? 0);
      levels.set(ilvl, { start: Number(attrVal(lvl, "start") ?? 1), format: attrVal(lvl, "numFmt") ?? "decimal" });
    }
    abstracts.set(id, levels);
  }
  const nums = new Map<string, { abstract: string; overrides: Map<number, number> }>();
  for (const n of numberingXml.match(/<w:num\b[^>]*>[\s\S]*?<\/w:num>/g) ?? []) {
    const id = /w:numId="(\d+)"/.exec(n)?.[1];
    const abstract = attrVal(n, "abstractNumId");
    if (!id || !abstract) continue;
    const overrides = new Map<number, number>();
    for (const o of n.match(/<w:lvlOverride\b[\s\S]*?<\/w:lvlOverride>/g) ?? []) {
      const start = attrVal(o, "startOverride");
      if (start !== undefined) overrides.set(Number(/w:ilvl="(\d+)"/.exec(o)?.[1] ?? 0), Number(start));
    }
    nums.set(id, { abstract, overrides });
  }
  return { abstracts, nums };
}

/**
 * Every list paragraph of the body, in order, as Word numbers it. Nums of one abstractNum share
 * their counters (that is how Word continues a list after an interruption), except where a num's
 * w:startOverride restarts a level the first time the num uses it.
 */
export function listParagraphs(documentXml: string, numberingXml: string): ListParagraph[] {
  const { abstracts, nums } = parseNumbering(numberingXml);
  const counters = new Map<string, Map<number, number>>();
  const overridden = new Set<string>();
  const out: ListParagraph[] = [];
  // Text boxes are written twice (DrawingML and a VML fallback); mammoth reads them once.
  const body = documentXml.replace(/<mc:Fallback\b[\s\S]*?<\/mc:Fallback>/g, "");
  for (const p of body.match(/<w:p\b[^>]*>[\s\S]*?<\/w:p>/g) ?? []) {
    const numPr = /<w:numPr>([\s\S]*?)<\/w:numPr>/.exec(p)?.[1];
    if (!numPr) continue;
    const numId = attrVal(numPr, "numId");
    if (!numId || numId === "0") continue;
    const ilvl = Number(attrVal(numPr, "ilvl") ?? 0);
    const num = nums.get(numId);
    const level = num ? abstracts.get(num.abstract)?.get(ilvl) : undefined;
    const key = num?.abstract ?? `num:${numId}`;
    const perList = counters.get(key) ?? new Map<number, number>();
    counters.set(key, perList);
    for (const deeper of [...perList.keys()]) if (deeper > ilvl) perList.delete(deeper);
    const override = num?.overrides.get(ilvl);
    const restart = override !== undefined && !overridden.has(`${numId}:${ilvl}`);
    if (restart) overridden.add(`${numId}:${ilvl}`);
    const previous = perList.get(ilvl);
    const value = restart ? override : previous === undefined ? (level?.start ?? 1) : previous + 1;
    perList.set(ilvl, value);
    out.push({ numId, ilvl, value, format: level?.format ?? "decimal" });
  }
  return out;
}

/** The number Word shows on each list paragraph of the body, in order (null for bullets). */
export function paragraphNumbers(documentXml: string, numberingXml: string): (number | null)[] {
  return listParagraphs(documentXml, numberingXml).map((p) => (p.format === "bullet" ? null : p.value));
}

/** True when an `<li>` holds nothing but nested lists: mammoth's wrapper for a jump of levels. */
function isWrapperItem($: cheerio.CheerioAPI, li: DomElement): boolean {
  if (li.attribs.id !== undefined) return false;
  const contents = $(li).contents().toArray();
  return (
    contents.some((node) => node.type === "tag") &&
    contents.every(
      (node) =>
        (node.type === "tag" && (node.name === "ol" || node.name === "ul")) ||
        (node.type === "text" && node.data.trim() === ""),
    )
  );
}

/**
 * Removes mammoth's wrapper items: a list paragraph a level or more deeper than the one before
 * it (or the first after an interruption) is wrapped in items of their own, which show as empty
 * numbers or bullets. Their lists move up to where the wrapper stood: after the item before it,
 * or before the list when the wrapper came first. Items keep their order.
 */
function unwrapJumps($: cheerio.CheerioAPI): boolean {
  let changed = false;
  // Deepest first, so a chain of wrappers collapses from the inside out.
  const wrappers = findAll($.root()[0], (e) => e.name === "li")
    .filter((li) => isWrapperItem($, li))
    .reverse();
  for (const li of wrappers) {
    if (!isWrapperItem($, li)) continue;
    const list = $(li).parent();
    const previous = $(li).prevAll("li").first();
    const lists = $(li).children("ol, ul");
    if (previous.length > 0) previous.append(lists);
    else list.before(lists);
    $(li).remove();
    if (list.children("li").length === 0) list.remove();
    changed = true;
  }
  return changed;
}

/**
 * Gives mammoth's lists Word's numbering: wrapper items removed (unwrapJumps); each `<ol>`/`<ul>`
 * split where its items belong to different Word lists or formats; `ul` for bullet levels and
 * `ol` otherwise, with `start` when the first item is not numbered 1 (a list restarting at 6,
 * or going on after an interruption) and `type` for letter and roman formats. Items of the notes
 * lists (and lists inside notes) are not body paragraphs and are not numbered.
 */
export function applyListStarts(html: string, documentXml: string, numberingXml: string): string {
  if (!/<li\b/.test(html)) return html;
  const paragraphs = listParagraphs(documentXml, numberingXml);
  const $ = loadHtml(html);
  let changed = unwrapJumps($);
  const root = $.root()[0];
  const inNotes = (el: DomElement) => $(el).closest('li[id^="footnote-"], li[id^="endnote-"]').length > 0;
  const items = findAll(root, (e) => e.name === "li").filter((li) => !inNotes(li));
  if (items.length !== paragraphs.length) return changed ? $.html() : html;
  const info = new Map(items.map((li, k) => [li, paragraphs[k]]));
  const lists = findAll(root, (e) => (e.name === "ol" || e.name === "ul") && e.attribs["data-part"] === undefined);
  for (const list of lists) {
    const children = $(list).children("li").toArray();
    if (children.length === 0 || !children.every((li) => info.has(li))) continue;
    // Runs of items of one Word list and format, each its own HTML list.
    const runs: DomElement[][] = [];
    for (const li of children) {
      const here = info.get(li) as ListParagraph;
      const last = runs.at(-1)?.at(-1);
      const before = last ? info.get(last) : undefined;
      const same =
        before &&
        before.numId === here.numId &&
        before.ilvl === here.ilvl &&
        before.format === here.format &&
        (here.format === "bullet" || here.value === before.value + 1);
      if (same) runs.at(-1)?.push(li);
      else runs.push([li]);
    }
    let anchor = list;
    runs.forEach((run, k) => {
      const target = k === 0 ? list : ($("<ol></ol>")[0] as DomElement);
      if (k > 0) {
        $(anchor).after(target);
        $(target).append(run);
        anchor = target;
      }
      if (numberList(target, info.get(run[0]) as ListParagraph)) changed = true;
    });
    if (runs.length > 1) changed = true;
  }
  return changed ? $.html() : html;
}

/** Sets a list's tag, `start` and `type` from its first item's Word numbering; true when changed. */
function numberList(list: DomElement, first: ListParagraph): boolean {
  const before = JSON.stringify([list.name, list.attribs]);
  const bullet = first.format === "bullet";
  list.name = bullet ? "ul" : "ol";
  delete list.attribs.start;
  delete list.attribs.type;
  if (!bullet && first.value !== 1 && first.value >= 0) list.attribs.start = String(first.value);
  const type = OL_TYPES.get(first.format);
  if (!bullet && type) list.attribs.type = type;
  return JSON.stringify([list.name, list.attribs]) !== before;
}
