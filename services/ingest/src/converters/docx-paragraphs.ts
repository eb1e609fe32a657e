// Word's paragraph facts that mammoth leaves out, put back on its HTML: list numbering (where
// each list starts, `<ol start="17">`; how it counts, `type="a" | "A" | "i" | "I"`, with the
// w:numFmt and w:lvlText HTML has no word for as `data-num-fmt` / `data-lvl-text` and CSS
// `list-style-type`; which items belong to which Word list), paragraph alignment and indentation
// as inline style. Each paragraph is found by the bookmark docx/paragraph-tags.ts gave it, so a
// paragraph mammoth did not make a list item (numbering from a style it does not read, a
// numbered heading) keeps its number as `data-list-label`, and nothing is matched by counting.
import type * as cheerio from "cheerio";
import type { ListParagraph } from "../docx/numbering.js";
import { PARAGRAPH_TAG, type ParagraphInfo } from "../docx/paragraph-tags.js";
import { type DomElement, findAll, loadHtml } from "../html/util.js";

// w:numFmt → the HTML `type` of an `<ol>` (decimal needs none).
const OL_TYPES = new Map([
  ["lowerLetter", "a"],
  ["upperLetter", "A"],
  ["lowerRoman", "i"],
  ["upperRoman", "I"],
]);
// w:numFmt HTML has no `type` for, as CSS list-style-type where CSS has a name for it.
const CSS_TYPES = new Map([
  ["decimalZero", "decimal-leading-zero"],
  ["none", "none"],
  ["hebrew1", "hebrew"],
  ["aiueo", "katakana"],
  ["iroha", "katakana-iroha"],
  ["japaneseCounting", "cjk-ideographic"],
  ["chineseCounting", "cjk-ideographic"],
  ["ideographTraditional", "cjk-heavenly-stem"],
  ["russianLower", "lower-russian"],
  ["russianUpper", "upper-russian"],
  ["lowerGreek", "lower-greek"],
]);
const BLOCKS = new Set(["li", "p", "h1", "h2", "h3", "h4", "h5", "h6"]);

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
function unwrapJumps($: cheerio.CheerioAPI): void {
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
  }
}

/** The nearest list item, paragraph or heading holding `el`. */
function blockOf(el: DomElement): DomElement | null {
  for (let node = el.parent; node; node = node.parent) {
    if (node.type === "tag" && BLOCKS.has((node as DomElement).name)) return node as DomElement;
  }
  return null;
}

function hasContent($: cheerio.CheerioAPI, el: DomElement): boolean {
  return $(el).text().trim() !== "" || $(el).find("img").length > 0;
}

/** Adds CSS declarations to an element's style attribute. */
function addStyle(el: DomElement, declarations: string[]): void {
  if (declarations.length === 0) return;
  const before = el.attribs.style?.trim().replace(/;$/, "");
  el.attribs.style = [...(before ? [before] : []), ...declarations].join("; ");
}

/**
 * Puts `info` (by tagged paragraph, docx/paragraph-tags.ts) on mammoth's HTML and removes the
 * tags: alignment and indentation as inline style, list numbering (applyLists), and on a
 * numbered paragraph that is not a list item its label as `data-list-label`. Returns `html`
 * itself when it holds no tag.
 */
export function applyParagraphInfo(html: string, info: ReadonlyMap<number, ParagraphInfo>): string {
  if (info.size === 0 || !html.includes(`<a id="${PARAGRAPH_TAG}`)) return html;
  const $ = loadHtml(html);
  const items = new Map<DomElement, ListParagraph>();
  const tags = findAll($.root()[0], (e) => e.name === "a" && (e.attribs.id ?? "").startsWith(PARAGRAPH_TAG));
  for (const tag of tags) {
    const here = info.get(Number(tag.attribs.id.slice(PARAGRAPH_TAG.length)));
    const block = blockOf(tag);
    $(tag).remove();
    if (!here || !block) continue;
    if (here.list) {
      if (block.name === "li") {
        if (!items.has(block)) items.set(block, here.list);
      } else if (here.list.format !== "bullet" && here.list.label.trim() !== "")
        block.attribs["data-list-label"] = here.list.label;
    }
    if (!hasContent($, block)) continue;
    const css: string[] = [];
    if (here.align) css.push(`text-align: ${here.align}`);
    // Indentation in a table cell is the cell's layout, and costs more than it shows.
    if (here.indentPt && block.name !== "li" && $(block).closest("td, th").length === 0) {
      if (here.indentPt.left > 0) css.push(`margin-left: ${here.indentPt.left}pt`);
      if (here.indentPt.firstLine !== 0) css.push(`text-indent: ${here.indentPt.firstLine}pt`);
    }
    addStyle(block, css);
  }
  applyLists($, items);
  return $.html();
}

/**
 * Gives mammoth's lists Word's numbering: wrapper items removed (unwrapJumps); each `<ol>`/`<ul>`
 * split where its items belong to different Word lists or formats or stop counting on; `ul` for
 * bullet levels and `ol` otherwise, with `start` when the first item is not numbered 1 (a list
 * restarting at 6, or going on after an interruption) and the level's format (numberList). Lists
 * with an item of unknown numbering (the notes lists) are left as they are.
 */
function applyLists($: cheerio.CheerioAPI, info: Map<DomElement, ListParagraph>): void {
  if (info.size === 0) return;
  unwrapJumps($);
  const lists = findAll(
    $.root()[0],
    (e) => (e.name === "ol" || e.name === "ul") && e.attribs["data-part"] === undefined,
  );
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
        before.lvlText === here.lvlText &&
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
      numberList(target, info.get(run[0]) as ListParagraph);
      // A level Word skipped (0 then 2) nests one list deep in HTML: the list says its own level.
      const depth = $(target).parents("ol, ul").length;
      const ilvl = (info.get(run[0]) as ListParagraph).ilvl;
      if (ilvl !== depth) target.attribs["data-ilvl"] = String(ilvl);
      else delete target.attribs["data-ilvl"];
    });
  }
}

/**
 * Sets a list's tag, `start` and `type` from its first item's Word numbering, and what HTML has
 * no attribute for: `data-num-fmt` (with CSS list-style-type where CSS names it) and
 * `data-lvl-text` when the label is not "N." (Word's "%1)", "(%1)", a legal "%1.%2.%3").
 */
function numberList(list: DomElement, first: ListParagraph): void {
  const bullet = first.format === "bullet";
  list.name = bullet ? "ul" : "ol";
  for (const name of ["start", "type", "data-num-fmt", "data-lvl-text"]) delete list.attribs[name];
  if (bullet) return;
  if (first.value !== 1 && first.value >= 0) list.attribs.start = String(first.value);
  const type = OL_TYPES.get(first.format);
  if (type) list.attribs.type = type;
  if (first.format !== "decimal") list.attribs["data-num-fmt"] = first.format;
  const css = CSS_TYPES.get(first.format);
  if (css && !/list-style-type/.test(list.attribs.style ?? "")) addStyle(list, [`list-style-type: ${css}`]);
  if (first.lvlText !== `%${first.ilvl + 1}.`) list.attribs["data-lvl-text"] = first.lvlText;
}
