// Reading order of a PDF page from pdf.js text items: items are grouped into lines by baseline,
// a vertical gutter with text on both sides marks a two-column band, and each band is read left
// column first, then right; lines that cross the gutter (titles, full-width tables) stay in
// place. Wide gaps inside a line split it into cells, which pdf-flow.ts may read as a table row.

/**
 * Marks around superscript and subscript text inside LayoutLine texts (control characters no
 * extracted text holds: pdf.js drops them), turned into <sup> and <sub> by scriptHtml.
 */
export const SUP_OPEN = "\u0002";
export const SUP_CLOSE = "\u0003";
export const SUB_OPEN = "\u0004";
export const SUB_CLOSE = "\u0005";
// biome-ignore lint/suspicious/noControlCharactersInRegex: the marks are control characters on purpose.
const SCRIPT_MARKS = /[\u0002-\u0005]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the marks are control characters on purpose.
const SCRIPT_RUN = /[\u0002\u0004][^\u0003\u0005]*[\u0003\u0005]/g;

/** A line's text without its script marks (`keepScripts`) or without its scripts at all. */
export function plainText(text: string, keepScripts = true): string {
  return keepScripts ? text.replace(SCRIPT_MARKS, "") : text.replace(SCRIPT_RUN, "");
}

/** HTML of a line's text: escaped by `escape`, script marks as <sup> and <sub>. */
export function scriptHtml(text: string, escapeText: (s: string) => string): string {
  return escapeText(text)
    .replaceAll(SUP_CLOSE + SUP_OPEN, "")
    .replaceAll(SUB_CLOSE + SUB_OPEN, "")
    .replaceAll(SUP_OPEN, "<sup>")
    .replaceAll(SUP_CLOSE, "</sup>")
    .replaceAll(SUB_OPEN, "<sub>")
    .replaceAll(SUB_CLOSE, "</sub>");
}

/** One positioned piece of text (PDF user space: y grows upwards). */
export interface TextItem {
  str: string;
  x: number;
  y: number;
  width: number;
  height: number;
  /** Set by pdf.ts from the font's name; absent in hand-built items. */
  bold?: boolean;
  /** Position in the page's content stream. */
  order?: number;
  /** Index of the ruled table (pageLines' `tables`) the item sits in. */
  table?: number;
}

interface Line {
  y: number;
  items: TextItem[];
}

// Items whose baselines differ by less than this share of their height are one line.
const SAME_LINE = 0.5;
// A gap wider than this many average character widths between items is a cell boundary.
const CELL_GAP_CHARS = 3;
// The gutter is searched in the middle of the page, and needs this share of lines on each side.
const GUTTER_MIN = 0.3;
const GUTTER_MAX = 0.7;
const SIDE_SHARE = 0.25;
// At most this share of lines may cross the gutter (titles, full-width figures).
const MAX_CROSSING = 0.5;
// A prose column's typical line is at least this share of the page width.
const PROSE_COLUMN_SHARE = 0.3;
// ... or, in a column holding a figure, at least this many lines (and SIDE_SHARE of them) are
// that long and mostly letters.
const MIN_PROSE_LINES = 8;
const PROSE_LETTER_SHARE = 0.6;
// A band between full-width lines is searched for a gutter when it has this many lines.
const MIN_BAND_LINES = 8;
// Stream lines switching column more often than this share are interleaved.
const INTERLEAVED_SHARE = 0.3;
// An item at most this share of its line's size, raised (lowered) by this share of it, is a
// superscript (subscript): a footnote mark, an exponent, a chemical formula's digit.
const SCRIPT_SIZE_RATIO = 0.85;
const SCRIPT_RISE = 0.2;
const SCRIPT_DROP = 0.1;
// A line is bold when this share of its characters are.
const BOLD_SHARE = 0.8;

function groupLines(items: TextItem[]): Line[] {
  const sorted = items.filter((i) => i.str !== "").sort((a, b) => b.y - a.y || a.x - b.x);
  const lines: Line[] = [];
  for (const item of sorted) {
    const last = lines[lines.length - 1];
    const tolerance = Math.max(1, Math.max(item.height || 10, last?.items[0]?.height ?? 0) * SAME_LINE);
    if (last && Math.abs(last.y - item.y) <= tolerance) last.items.push(item);
    else lines.push({ y: item.y, items: [item] });
  }
  for (const line of lines) line.items.sort((a, b) => a.x - b.x);
  return lines;
}

// Text on both sides of a candidate gutter closer than this many ems is one line of words
// (a word gap, even a wide justified one), not two columns.
const GUTTER_GAP_EM = 1.5;

/** A line's visible items as extents (left and right edges, in points) and its largest size. */
interface Extent {
  lefts: number[];
  rights: number[];
  size: number;
}

// Extents are asked for many times per line (every gutter candidate): computed once each.
const EXTENTS = new WeakMap<Line, Extent>();

function extentOf(line: Line): Extent {
  let extent = EXTENTS.get(line);
  if (!extent) {
    extent = { lefts: [], rights: [], size: 0 };
    for (const i of line.items) {
      if (i.str.trim() === "") continue;
      extent.lefts.push(i.x);
      extent.rights.push(i.x + i.width);
      extent.size = Math.max(extent.size, i.height);
    }
    EXTENTS.set(line, extent);
  }
  return extent;
}

/**
 * Where the line's text sits against x: whether it crosses x (an item spans it, or words on
 * both sides sit closer than a gutter), and whether it has text left and right of it.
 */
function sides(line: Line, x: number): { crosses: boolean; left: boolean; right: boolean } {
  const { lefts, rights, size } = extentOf(line);
  let leftEnd = Number.NEGATIVE_INFINITY;
  let rightStart = Number.POSITIVE_INFINITY;
  for (let k = 0; k < lefts.length; k++) {
    if (lefts[k] < x && rights[k] > x) return { crosses: true, left: false, right: false };
    if (rights[k] <= x) leftEnd = Math.max(leftEnd, rights[k]);
    else rightStart = Math.min(rightStart, lefts[k]);
  }
  return {
    crosses: rightStart - leftEnd < GUTTER_GAP_EM * (size || 10),
    left: leftEnd > Number.NEGATIVE_INFINITY,
    right: rightStart < Number.POSITIVE_INFINITY,
  };
}

/** True when the line's text runs across x: an item spans it, or words on both sides sit closer than a gutter. */
function crosses(line: Line, x: number): boolean {
  return sides(line, x).crosses;
}

/**
 * The middle of the empty band around x (the gutter search steps by a hundredth of the page,
 * so x may sit next to one column's edge and a line reaching a little further would cross it).
 */
function gapMiddle(lines: Line[], x: number): number {
  let leftEnd = Number.NEGATIVE_INFINITY;
  let rightStart = Number.POSITIVE_INFINITY;
  for (const line of lines) {
    if (crosses(line, x)) continue;
    for (const i of line.items) {
      if (i.str.trim() === "") continue;
      if (i.x + i.width <= x) leftEnd = Math.max(leftEnd, i.x + i.width);
      else if (i.x >= x) rightStart = Math.min(rightStart, i.x);
    }
  }
  return Number.isFinite(leftEnd) && Number.isFinite(rightStart) ? (leftEnd + rightStart) / 2 : x;
}

/** The x of a vertical gutter that splits the page's lines into two columns, or null. */
export function findGutter(lines: Line[], pageWidth: number): number | null {
  const wideLines = lines.filter((l) => extentOf(l).lefts.length > 0);
  if (wideLines.length < 6) return null;
  let best: { x: number; crossing: number } | null = null;
  const step = pageWidth / 100;
  for (let x = pageWidth * GUTTER_MIN; x <= pageWidth * GUTTER_MAX; x += step) {
    let crossing = 0;
    let left = 0;
    let right = 0;
    for (const line of wideLines) {
      const at = sides(line, x);
      if (at.crosses) crossing++;
      else {
        if (at.left) left++;
        if (at.right) right++;
      }
    }
    const n = wideLines.length;
    if (left < n * SIDE_SHARE || right < n * SIDE_SHARE) continue;
    if (!best || crossing < best.crossing) best = { x, crossing };
  }
  // Most lines must respect the gutter; spanning lines (a title block on page 1) are fine.
  if (!best || best.crossing > wideLines.length * MAX_CROSSING) return null;
  // Columns of prose are long lines on both sides; a two-column table has short cells and
  // must stay row by row. A column may also hold a figure (a diagram's labels, a code
  // listing) whose short lines pull its median down: it still counts as prose when enough of
  // its lines are long lines of words.
  const gutter = gapMiddle(wideLines, best.x);
  const segments = (side: "l" | "r") =>
    wideLines
      .map((line) => {
        const items = line.items.filter(
          (i) => i.str.trim() !== "" && (side === "l" ? i.x + i.width <= gutter : i.x >= gutter),
        );
        if (items.length === 0) return null;
        const text = items.map((i) => i.str).join("");
        const width = Math.max(...items.map((i) => i.x + i.width)) - Math.min(...items.map((i) => i.x));
        const visible = text.replace(/\s/g, "").length;
        const words = (text.match(/\p{L}/gu)?.length ?? 0) >= visible * PROSE_LETTER_SHARE;
        return { width, words };
      })
      .filter((s) => s !== null);
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  const prose = pageWidth * PROSE_COLUMN_SHARE;
  const isProse = (side: "l" | "r") => {
    const all = segments(side);
    if (median(all.map((s) => s.width)) >= prose) return true;
    const long = all.filter((s) => s.width >= prose && s.words).length;
    return long >= Math.max(MIN_PROSE_LINES, all.length * SIDE_SHARE);
  };
  return isProse("l") && isProse("r") ? gutter : null;
}

/** A gutter that holds for the lines between `bottom` and `top` (y in points) only. */
interface Band {
  gutter: number;
  top: number;
  bottom: number;
}

/**
 * The gutter of the page's tallest two-column band, for a page whose full-width blocks (a
 * code listing, a figure's caption above the columns) cross the middle more often than the
 * page-wide search allows. Bands are runs of lines between lines that cross the page's middle.
 */
function bandGutter(lines: Line[], pageWidth: number): Band | null {
  let best: Band | null = null;
  let size = 0;
  let band: Line[] = [];
  const close = () => {
    const gutter = band.length >= MIN_BAND_LINES ? findGutter(band, pageWidth) : null;
    if (gutter !== null && band.length > size) {
      best = { gutter, top: band[0].y, bottom: band[band.length - 1].y };
      size = band.length;
    }
    band = [];
  };
  for (const line of lines) {
    if (line.items.some((i) => i.str.trim() !== "") && crosses(line, pageWidth / 2)) close();
    else band.push(line);
  }
  close();
  return best;
}

/** Lines in content-stream order: a new line starts where the baseline moves. */
function streamLines(items: TextItem[]): Line[] {
  const lines: Line[] = [];
  for (const item of items) {
    if (item.str === "") continue;
    const last = lines[lines.length - 1];
    // Superscripts sit above the baseline: the taller of the two sets the tolerance.
    const tolerance = Math.max(1, Math.max(item.height || 10, last?.items[0]?.height ?? 0) * SAME_LINE);
    if (last && Math.abs(last.y - item.y) <= tolerance && item.x >= (last.items.at(-1)?.x ?? 0) - 1)
      last.items.push(item);
    else lines.push({ y: item.y, items: [item] });
  }
  return lines;
}

/** True when consecutive stream lines jump between the columns often: the producer wrote rows across the gutter. */
function interleaved(lines: Line[], gutter: number): boolean {
  const sides = lines
    .filter((l) => l.items.some((i) => i.str.trim() !== ""))
    .map((l) => {
      const real = l.items.filter((i) => i.str.trim() !== "");
      if (crosses(l, gutter)) return "x";
      const left = real.every((i) => i.x + i.width <= gutter);
      const right = real.every((i) => i.x >= gutter);
      // "b": one stream line holding text of both columns is a row written across the gutter.
      return left ? "l" : right ? "r" : "b";
    })
    .filter((side) => side !== "x");
  let switches = sides.filter((side) => side === "b").length;
  for (let i = 1; i < sides.length; i++)
    if (sides[i] !== "b" && sides[i - 1] !== "b" && sides[i] !== sides[i - 1]) switches++;
  return sides.length > 0 && switches > sides.length * INTERLEAVED_SHARE;
}

/** A piece of a line between wide gaps: one cell of a table row, or the whole line of prose. */
export interface LineCell {
  text: string;
  left: number;
  right: number;
}

/**
 * One text line in reading order (x and y in points, y growing upwards). `breakBefore` says what
 * precedes it: nothing (the next line of the same block), a paragraph gap, or a jump to another
 * column or band (which may or may not end the paragraph; see pdf-flow.ts).
 */
export interface LayoutLine {
  kind: "line";
  text: string;
  y: number;
  /** Font size of the line (its largest visible item's), in points. */
  height: number;
  left: number;
  right: number;
  /** Most of the line's characters are in a bold font. */
  bold: boolean;
  cells: LineCell[];
  /** 0 left column, 1 right column, -1 one column or across the gutter. */
  column: number;
  breakBefore: "none" | "para" | "column";
}

/** A table rebuilt from ruling lines, placed where its first text item was. */
export interface LayoutTable {
  kind: "table";
  rows: string[][];
  y: number;
}

export type LayoutEntry = LayoutLine | LayoutTable;

/**
 * Where a line's text is set: the baseline and size of the item carrying most characters
 * (superscripts and subscripts are measured against it).
 */
export function mainRun(items: TextItem[]): { y: number; height: number } {
  const weight = new Map<string, { y: number; height: number; chars: number }>();
  for (const i of items) {
    const key = `${Math.round(i.y * 2)}:${Math.round(i.height * 2)}`;
    const run = weight.get(key) ?? { y: i.y, height: i.height, chars: 0 };
    run.chars += i.str.trim().length;
    weight.set(key, run);
  }
  let best = { y: items[0]?.y ?? 0, height: items[0]?.height ?? 10, chars: -1 };
  for (const run of weight.values()) if (run.chars > best.chars) best = run;
  return best;
}

/** The item's text, wrapped in SUP or SUB marks when it is set smaller above or below the line's baseline. */
export function shifted(item: TextItem, main: { y: number; height: number }): string {
  if (item.height > main.height * SCRIPT_SIZE_RATIO || item.str.trim() === "") return item.str;
  const rise = item.y - main.y;
  if (rise >= main.height * SCRIPT_RISE) return `${SUP_OPEN}${item.str}${SUP_CLOSE}`;
  if (rise <= -main.height * SCRIPT_DROP) return `${SUB_OPEN}${item.str}${SUB_CLOSE}`;
  return item.str;
}

function toLine(l: Line, column: number): LayoutLine {
  const cells: LineCell[] = [];
  let prevEnd: number | null = null;
  let boldChars = 0;
  let chars = 0;
  const main = mainRun(l.items.filter((i) => i.str.trim() !== ""));
  // Blank items only say "a space here": some producers give them the width of a justified
  // gap or more, so gaps are measured between visible items.
  let space = false;
  for (const item of l.items) {
    if (item.str.trim() === "") {
      space = space || item.str !== "";
      continue;
    }
    const charWidth = item.width / item.str.length;
    const str = shifted(item, main);
    const visible = item.str.replace(/\s/g, "").length;
    chars += visible;
    if (item.bold) boldChars += visible;
    const cell = cells[cells.length - 1];
    if (prevEnd !== null && cell) {
      const gap = item.x - prevEnd;
      if (charWidth > 0 && gap > CELL_GAP_CHARS * charWidth) {
        cells.push({ text: str, left: item.x, right: item.x + item.width });
      } else {
        if ((space || gap > charWidth * 0.25) && !cell.text.endsWith(" ") && !item.str.startsWith(" "))
          cell.text += " ";
        cell.text += str;
        cell.right = Math.max(cell.right, item.x + item.width);
      }
    } else cells.push({ text: str, left: item.x, right: item.x + item.width });
    prevEnd = item.x + item.width;
    space = false;
  }
  if (cells.length === 0) cells.push({ text: "", left: l.items[0]?.x ?? 0, right: l.items[0]?.x ?? 0 });
  for (const cell of cells) cell.text = cell.text.replace(/[ ]{2,}/g, " ");
  const text = cells.map((c) => c.text).join("\t");
  const real = cells.filter((c) => c.text.trim() !== "");
  return {
    kind: "line",
    text,
    y: main.y,
    // Font size: the largest visible item's (a superscript is smaller than its line).
    height:
      Math.max(0, ...l.items.filter((i) => i.str.trim() !== "").map((i) => i.height)) || (l.items[0]?.height ?? 10),
    left: real.length > 0 ? Math.min(...real.map((c) => c.left)) : 0,
    right: real.length > 0 ? Math.max(...real.map((c) => c.right)) : 0,
    bold: chars > 0 && boldChars >= chars * BOLD_SHARE,
    cells,
    column,
    breakBefore: "none",
  };
}

/**
 * Marks paragraph gaps (about two lines of space), jumps back up the page or to the other
 * column (a column break), and the line after a table (a new paragraph).
 */
function markBreaks(entries: LayoutEntry[]): void {
  let prev: LayoutLine | null = null;
  let afterTable = false;
  for (const entry of entries) {
    if (entry.kind === "table") {
      prev = null;
      afterTable = true;
      continue;
    }
    if (prev) {
      const h = Math.max(prev.height, entry.height);
      if (entry.y > prev.y + h || entry.column !== prev.column) entry.breakBefore = "column";
      else if (prev.y - entry.y > h * 1.8) entry.breakBefore = "para";
    } else if (afterTable) entry.breakBefore = "para";
    afterTable = false;
    prev = entry;
  }
}

/** Which column a line of a page with a gutter sits in (-1 when it crosses or there is none). */
function columnOf(line: Line, gutter: number | null): number {
  if (gutter === null) return -1;
  const real = line.items.filter((i) => i.str.trim() !== "");
  if (real.length === 0) return -1;
  if (real.every((i) => i.x + i.width <= gutter)) return 0;
  if (real.every((i) => i.x >= gutter)) return 1;
  return -1;
}

/**
 * The page's lines (and ruled tables) in reading order, each marked with what precedes it.
 * Most producers write text in reading order, so the content stream's order is kept; when a
 * two-column page was written row by row across the gutter, the columns are read one after
 * the other instead (lines crossing the gutter, such as titles, stay in place). Items with
 * `table` set belong to a ruled table (pdf-tables.ts): the table takes the place of its first
 * item and its other items are skipped.
 */
export function pageLines(items: TextItem[], pageWidth: number, tables: LayoutTable[] = []): LayoutEntry[] {
  const flow = items.filter((i) => i.table === undefined);
  const firstOrder = tables.map(() => Number.POSITIVE_INFINITY);
  for (const item of items)
    if (item.table !== undefined) firstOrder[item.table] = Math.min(firstOrder[item.table], item.order ?? 0);
  const placed = new Set<number>();
  const out: LayoutEntry[] = [];
  const place = (k: number) => {
    placed.add(k);
    out.push(tables[k]);
  };
  const stream = streamLines(flow);
  const grouped = groupLines(flow);
  const pageGutter = findGutter(grouped, pageWidth);
  // A band's columns are read in stream order: lines outside the band are in no column.
  const band = pageGutter === null ? bandGutter(grouped, pageWidth) : null;
  const gutter = pageGutter ?? band?.gutter ?? null;
  const inBand = (line: Line) =>
    band === null || (line.y <= band.top + line.items[0].height && line.y >= band.bottom - line.items[0].height);
  if (gutter === null || band !== null || !interleaved(stream, gutter)) {
    for (const line of stream) {
      const at = line.items[0]?.order ?? Number.POSITIVE_INFINITY;
      firstOrder.forEach((order, k) => {
        if (!placed.has(k) && order < at) place(k);
      });
      out.push(toLine(line, columnOf(line, inBand(line) ? gutter : null)));
    }
  } else {
    let left: Line[] = [];
    let right: Line[] = [];
    const flush = () => {
      out.push(...left.map((l) => toLine(l, 0)), ...right.map((l) => toLine(l, 1)));
      left = [];
      right = [];
    };
    for (const line of groupLines(flow)) {
      const above = tables.findIndex((t, k) => !placed.has(k) && t.y >= line.y);
      if (above >= 0) {
        flush();
        place(above);
      }
      if (crosses(line, gutter)) {
        flush();
        out.push(toLine(line, -1));
        continue;
      }
      const l = line.items.filter((i) => i.x + i.width <= gutter);
      const r = line.items.filter((i) => i.x + i.width > gutter);
      if (l.length > 0) left.push({ y: line.y, items: l });
      if (r.length > 0) right.push({ y: line.y, items: r });
    }
    flush();
  }
  tables.forEach((_, k) => {
    if (!placed.has(k)) place(k);
  });
  markBreaks(out);
  return out;
}

/**
 * The page's text in reading order, one line per text line, cells separated by tabs, blank
 * lines at paragraph gaps and column changes (see pageLines).
 */
export function pageText(items: TextItem[], pageWidth: number): string {
  const out: string[] = [];
  for (const entry of pageLines(items, pageWidth)) {
    if (entry.kind === "table") {
      out.push(...entry.rows.map((r) => r.join("\t")), "");
      continue;
    }
    if (entry.breakBefore !== "none" && out.length > 0 && out[out.length - 1] !== "") out.push("");
    out.push(plainText(entry.text));
  }
  return out.join("\n");
}
