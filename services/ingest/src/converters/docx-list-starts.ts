// Start numbers of Word lists, which mammoth leaves out: a list that restarts at 6 (or goes on
// from an earlier one) gets `<ol start="6">`. Word numbers each paragraph from numbering.xml
// (the level's w:start, a num's w:startOverride, counters per list and level, deeper levels
// restarting under a shallower one); mammoth writes one <li> per list paragraph in body order,
// so the n-th <li> is the n-th numbered paragraph. When the counts disagree (numbering from
// styles, text boxes written twice) nothing is changed: no start is better than a wrong one.
import { findAll, loadHtml } from "./html-util.js";

interface LevelDef {
  start: number;
  bullet: boolean;
}

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
      levels.set(ilvl, { start: Number(attrVal(lvl, "start") ?? 1), bullet: attrVal(lvl, "numFmt") === "bullet" });
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

/** True when numbering.xml can make any list start elsewhere than 1. */
export function hasListStarts(numberingXml: string | undefined): boolean {
  if (!numberingXml) return false;
  return /<w:startOverride\b/.test(numberingXml) || /<w:start w:val="(?!1")\d+"/.test(numberingXml);
}

/** The number Word shows on each list paragraph of the body, in order (null for bullets). */
export function paragraphNumbers(documentXml: string, numberingXml: string): (number | null)[] {
  const { abstracts, nums } = parseNumbering(numberingXml);
  const counters = new Map<string, Map<number, number>>();
  const out: (number | null)[] = [];
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
    const perList = counters.get(numId) ?? new Map<number, number>();
    counters.set(numId, perList);
    for (const deeper of [...perList.keys()]) if (deeper > ilvl) perList.delete(deeper);
    const previous = perList.get(ilvl);
    const value = previous === undefined ? (num?.overrides.get(ilvl) ?? level?.start ?? 1) : previous + 1;
    perList.set(ilvl, value);
    out.push(level?.bullet ? null : value);
  }
  return out;
}

/**
 * Adds `start` to each `<ol>` of mammoth's HTML whose first item Word numbers other than 1.
 * Items of the notes lists (and lists inside notes) are not body paragraphs and are skipped.
 */
export function applyListStarts(html: string, documentXml: string, numberingXml: string): string {
  const numbers = paragraphNumbers(documentXml, numberingXml);
  const $ = loadHtml(html);
  // Mammoth wraps a jump of several levels in items of only a nested list: not paragraphs.
  const ownContent = (li: Parameters<typeof $>[0]) =>
    $(li)
      .contents()
      .toArray()
      .some((node) => !(node.type === "tag" && (node.name === "ol" || node.name === "ul")));
  const root = $.root()[0];
  const items = findAll(root, (e) => e.name === "li").filter(
    (li) => $(li).closest('li[id^="footnote-"], li[id^="endnote-"]').length === 0 && ownContent(li),
  );
  if (items.length !== numbers.length) return html;
  const index = new Map(items.map((li, k) => [li, k]));
  let changed = false;
  for (const ol of findAll(root, (e) => e.name === "ol")) {
    let first = $(ol).children("li").first()[0];
    // Through wrapper items down to the first real paragraph of this list.
    while (first && !index.has(first)) first = $(first).children("ol, ul").first().children("li").first()[0];
    const k = first ? index.get(first) : undefined;
    const value = k === undefined ? null : numbers[k];
    if (value !== null && value !== 1 && value > 0) {
      $(ol).attr("start", String(value));
      changed = true;
    }
  }
  return changed ? $.html() : html;
}
