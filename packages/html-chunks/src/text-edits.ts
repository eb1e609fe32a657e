// Markup-preserving edits used by the offline engine: they touch only text
// nodes or append a row, so styles, classes and untouched structure survive.
import {
  appendChild,
  type ChildNode,
  type Document,
  Element,
  elementChildren,
  insertAfterNode,
  isTag,
  isText,
  type ParentNode,
  parseHtml,
  replaceNode,
  serialize,
  Text,
} from "./dom.js";
import { ChunkError } from "./errors.js";
import { directRows } from "./table-rows.js";

const CELL_TAGS = new Set(["td", "th"]);
// Attributes never copied from the template row: spans would break the grid,
// ids must stay unique.
const NOT_COPIED = new Set(["colspan", "rowspan", "id", "data-chunk-id"]);
// Text inside these is code or raw data, never prose to edit.
const SKIP_TEXT_IN = new Set(["script", "style", "textarea", "code", "pre"]);

/**
 * Appends a row to a table chunk: to its last <tbody>, or to the table itself
 * when it has none. Cells copy the tag name (td/th) and attributes of the
 * previous row's cells (and the row copies that row's attributes), minus
 * colspan/rowspan/id. `cells` are plain text (escaped on output); when fewer
 * than the table's column count (widest row, colspans summed), empty cells pad
 * the row. The first <table> in the HTML is used; tables nested in it are not
 * looked into.
 * @returns the chunk's new HTML (data-chunk-id and any wrapper kept).
 * @throws ChunkError `not_table` when the HTML has no <table>.
 */
export function addTableRow(tableHtml: string, cells: string[]): string {
  const doc = parseHtml(tableHtml);
  const table = findFirst(doc, "table");
  if (!table) throw new ChunkError("not_table", "HTML contains no <table>");
  const rows = directRows(table);
  const groups = elementChildren(table).filter((el) => el.name === "tbody");
  const container: Element = groups.length > 0 ? groups[groups.length - 1] : table;
  const containerRows = elementChildren(container).filter((el) => el.name === "tr");
  const template = containerRows[containerRows.length - 1] ?? rows[rows.length - 1];

  const columns = Math.max(cells.length, ...rows.map(columnCount), 0);
  const row = buildRow(template, cells, columns);
  if (template && template.parent === container) {
    insertWithIndent(template, row);
  } else {
    appendChild(container, row);
  }
  // The whole input, so a table inside a <figure> or <blockquote> chunk keeps its wrapper.
  return serialize(doc.children);
}

function columnCount(row: Element): number {
  return cellsOf(row).reduce(
    (sum, cell) => sum + Math.max(1, Number.parseInt(cell.attribs.colspan ?? "1", 10) || 1),
    0,
  );
}

function cellsOf(row: Element): Element[] {
  return elementChildren(row).filter((el) => CELL_TAGS.has(el.name));
}

function buildRow(template: Element | undefined, cells: string[], columns: number): Element {
  const templateCells = template ? cellsOf(template) : [];
  const row = new Element("tr", template ? copyAttributes(template) : {});
  for (let i = 0; i < columns; i++) {
    const model = templateCells[i] ?? templateCells[templateCells.length - 1];
    const cell = new Element(model ? model.name : "td", model ? copyAttributes(model) : {});
    const text = cells[i] ?? "";
    if (text !== "") appendChild(cell, new Text(text));
    appendChild(row, cell);
  }
  return row;
}

function copyAttributes(el: Element): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(el.attribs)) if (!NOT_COPIED.has(name)) out[name] = value;
  return out;
}

// Puts the new row after the template, repeating the whitespace that precedes
// the template so pretty-printed tables stay pretty.
function insertWithIndent(template: Element, row: Element): void {
  const before = template.prev;
  const indent = before && isText(before) && /^[ \t\n\r\f]+$/.test(before.data) ? before.data : null;
  insertAfterNode(template, indent ? [new Text(indent), row] : [row]);
}

function findFirst(root: ParentNode, tag: string): Element | null {
  for (const child of root.children) {
    if (!isTag(child)) continue;
    if (child.name === tag) return child;
    const found = findFirst(child, tag);
    if (found) return found;
  }
  return null;
}

/**
 * Wraps every occurrence of `phrase` in the chunk's text nodes with <strong>
 * or <em>. Attributes and markup are never touched; text already inside that
 * tag (or its b/i twin), and text in code/pre/script/style, is skipped.
 * Occurrences split across elements (e.g. "foo <b>bar</b>") are not found.
 * Case-sensitive unless `opts.caseSensitive` is false.
 * @returns the new HTML and the number of wrapped occurrences; when 0, the
 *   input HTML is returned unchanged.
 */
export function wrapPhrase(
  chunkHtml: string,
  phrase: string,
  tag: "strong" | "em",
  opts: { caseSensitive?: boolean } = {},
): { html: string; count: number } {
  if (tag !== "strong" && tag !== "em") throw new ChunkError("invalid_argument", `cannot wrap with <${String(tag)}>`);
  const twin = tag === "strong" ? "b" : "i";
  return editTextNodes(chunkHtml, phrase, opts.caseSensitive !== false, new Set([tag, twin]), (matched) => {
    const el = new Element(tag, {});
    appendChild(el, new Text(matched));
    return el;
  });
}

/**
 * Replaces every occurrence of `find` in the chunk's text nodes with the plain
 * text `replacement` (escaped on output). Markup, attributes and styles stay
 * intact; occurrences split across elements are not found; text in
 * code/pre/script/style is skipped. Case-sensitive unless
 * `opts.caseSensitive` is false.
 * @returns the new HTML and the number of replacements; when 0, the input
 *   HTML is returned unchanged.
 */
export function replaceText(
  chunkHtml: string,
  find: string,
  replacement: string,
  opts: { caseSensitive?: boolean } = {},
): { html: string; count: number } {
  return editTextNodes(chunkHtml, find, opts.caseSensitive !== false, new Set(), () => new Text(replacement));
}

// Splits each eligible text node around the matches of `needle` and
// substitutes `make(match)` for every match.
function editTextNodes(
  html: string,
  needle: string,
  caseSensitive: boolean,
  skipInside: ReadonlySet<string>,
  make: (matched: string) => ChildNode,
): { html: string; count: number } {
  if (typeof needle !== "string" || needle === "") return { html, count: 0 };
  const doc = parseHtml(html);
  const pattern = new RegExp(needle.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), caseSensitive ? "g" : "gi");
  let count = 0;
  for (const node of eligibleTextNodes(doc, skipInside)) {
    const pieces: ChildNode[] = [];
    let last = 0;
    for (const match of node.data.matchAll(pattern)) {
      const index = match.index ?? 0;
      if (index > last) pieces.push(new Text(node.data.slice(last, index)));
      pieces.push(make(match[0]));
      last = index + match[0].length;
      count++;
    }
    if (pieces.length === 0) continue;
    if (last < node.data.length) pieces.push(new Text(node.data.slice(last)));
    replaceNode(node, pieces);
  }
  return count === 0 ? { html, count } : { html: serialize(doc.children), count };
}

// Collected up front because the caller replaces nodes while iterating.
function eligibleTextNodes(root: Document | Element, skipInside: ReadonlySet<string>): Text[] {
  const out: Text[] = [];
  const walk = (parent: ParentNode) => {
    for (const child of parent.children) {
      if (isText(child)) out.push(child);
      else if (isTag(child) && !SKIP_TEXT_IN.has(child.name) && !skipInside.has(child.name)) walk(child);
    }
  };
  walk(root);
  return out;
}
