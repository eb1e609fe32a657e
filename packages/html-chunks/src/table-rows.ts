// Reading a table chunk row by row (the MCP read_document tool's table rows, through documents'
// ReadDocument): the rows of the first table, never those of tables nested in its cells.
import { type Element, elementChildren, isTag, type ParentNode, parseHtml, serialize } from "./dom.js";
import { ChunkError } from "./errors.js";

const ROW_GROUP_TAGS = new Set(["thead", "tbody", "tfoot"]);

/**
 * The rows (`<tr>` outer HTML, in order: thead, tbody and tfoot rows as they stand) of the first
 * `<table>` in a chunk's HTML; rows of tables nested in its cells belong to their cells.
 * @throws ChunkError `not_table` when the HTML has no <table>.
 */
export function tableRows(html: string): string[] {
  const table = firstTable(parseHtml(html));
  if (!table) throw new ChunkError("not_table", "the chunk holds no <table>");
  return directRows(table).map((row) => serialize(row));
}

/** A table's own rows, in order: its direct `<tr>` and those of its thead, tbody and tfoot. */
export function directRows(table: Element): Element[] {
  const rows: Element[] = [];
  for (const child of elementChildren(table)) {
    if (child.name === "tr") rows.push(child);
    else if (ROW_GROUP_TAGS.has(child.name)) rows.push(...elementChildren(child).filter((el) => el.name === "tr"));
  }
  return rows;
}

/** Whether a chunk's HTML holds a table (the chunk is one, or wraps one: a figure, a div). */
export function hasTable(html: string): boolean {
  return /<table[\s>]/i.test(html);
}

function firstTable(root: ParentNode): Element | null {
  for (const child of root.children) {
    if (!isTag(child)) continue;
    if (child.name === "table") return child;
    const found = firstTable(child);
    if (found) return found;
  }
  return null;
}
