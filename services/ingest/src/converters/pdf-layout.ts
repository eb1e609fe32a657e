// Reading order of a PDF page from pdf.js text items: items are grouped into lines by baseline,
// a vertical gutter with text on both sides marks a two-column band, and each band is read left
// column first, then right; lines that cross the gutter (titles, full-width tables) stay in
// place. Wide gaps inside a line become tabs, which pageToHtml reads as table cells.

/** One positioned piece of text (PDF user space: y grows upwards). */
export interface TextItem {
  str: string;
  x: number;
  y: number;
  width: number;
  height: number;
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
// Stream lines switching column more often than this share are interleaved.
const INTERLEAVED_SHARE = 0.3;

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

/** The x of a vertical gutter that splits the page's lines into two columns, or null. */
export function findGutter(lines: Line[], pageWidth: number): number | null {
  const wideLines = lines.filter((l) => l.items.some((i) => i.str.trim() !== ""));
  if (wideLines.length < 6) return null;
  let best: { x: number; crossing: number } | null = null;
  const step = pageWidth / 100;
  for (let x = pageWidth * GUTTER_MIN; x <= pageWidth * GUTTER_MAX; x += step) {
    let crossing = 0;
    let left = 0;
    let right = 0;
    for (const line of wideLines) {
      let l = false;
      let r = false;
      let c = false;
      for (const i of line.items) {
        if (i.str.trim() === "") continue;
        if (i.x < x && i.x + i.width > x) c = true;
        else if (i.x + i.width <= x) l = true;
        else r = true;
      }
      if (c) crossing++;
      else {
        if (l) left++;
        if (r) right++;
      }
    }
    const n = wideLines.length;
    if (left < n * SIDE_SHARE || right < n * SIDE_SHARE) continue;
    if (!best || crossing < best.crossing) best = { x, crossing };
  }
  // Most lines must respect the gutter; spanning lines (a title block on page 1) are fine.
  if (!best || best.crossing > wideLines.length * MAX_CROSSING) return null;
  // Columns of prose are long lines on both sides; a two-column table has short cells and
  // must stay row by row.
  const gutter = best.x;
  const segment = (line: Line, side: "l" | "r") => {
    const items = line.items.filter(
      (i) => i.str.trim() !== "" && (side === "l" ? i.x + i.width <= gutter : i.x >= gutter),
    );
    return items.length === 0 ? 0 : Math.max(...items.map((i) => i.x + i.width)) - Math.min(...items.map((i) => i.x));
  };
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  const leftWidths = wideLines.map((l) => segment(l, "l")).filter((w) => w > 0);
  const rightWidths = wideLines.map((l) => segment(l, "r")).filter((w) => w > 0);
  const prose = pageWidth * PROSE_COLUMN_SHARE;
  return median(leftWidths) >= prose && median(rightWidths) >= prose ? gutter : null;
}

function lineText(items: TextItem[]): string {
  let out = "";
  let prevEnd: number | null = null;
  for (const item of items) {
    const charWidth = item.str.length > 0 ? item.width / item.str.length : 0;
    if (prevEnd !== null) {
      const gap = item.x - prevEnd;
      if (charWidth > 0 && gap > CELL_GAP_CHARS * charWidth && out.trim() !== "") out += "\t";
      else if (gap > charWidth * 0.25 && !out.endsWith(" ") && !item.str.startsWith(" ")) out += " ";
    }
    out += item.str;
    prevEnd = item.x + item.width;
  }
  return out.replace(/[ ]{2,}/g, " ");
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
      if (real.some((i) => i.x < gutter && i.x + i.width > gutter)) return "x";
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

type OutLine = { y: number; text: string; height: number };

function joinBands(bands: OutLine[][]): string {
  const out: string[] = [];
  for (const band of bands) {
    let prev: OutLine | null = null;
    for (const line of band) {
      // A vertical gap of about two lines is a paragraph break.
      if (prev && Math.abs(prev.y - line.y) > Math.max(prev.height, line.height) * 1.8) out.push("");
      out.push(line.text);
      prev = line;
    }
    out.push("");
  }
  return out.join("\n");
}

const toOut = (l: Line): OutLine => ({ y: l.y, text: lineText(l.items), height: l.items[0]?.height ?? 10 });

/**
 * The page's text in reading order, one line per text line, blank lines at paragraph gaps.
 * Most producers write text in reading order, so the content stream's order is kept; when a
 * two-column page was written row by row across the gutter, the columns are read one after
 * the other instead (lines crossing the gutter, such as titles, stay in place).
 */
export function pageText(items: TextItem[], pageWidth: number): string {
  const stream = streamLines(items);
  const gutter = findGutter(groupLines(items), pageWidth);
  if (gutter === null || !interleaved(stream, gutter)) return joinBands([stream.map(toOut)]);
  const bands: OutLine[][] = [];
  let left: Line[] = [];
  let right: Line[] = [];
  const flush = () => {
    if (left.length > 0) bands.push(left.map(toOut));
    if (right.length > 0) bands.push(right.map(toOut));
    left = [];
    right = [];
  };
  for (const line of groupLines(items)) {
    if (line.items.some((i) => i.str.trim() !== "" && i.x < gutter && i.x + i.width > gutter)) {
      flush();
      bands.push([toOut(line)]);
      continue;
    }
    const l = line.items.filter((i) => i.x + i.width <= gutter);
    const r = line.items.filter((i) => i.x + i.width > gutter);
    if (l.length > 0) left.push({ y: line.y, items: l });
    if (r.length > 0) right.push({ y: line.y, items: r });
  }
  flush();
  return joinBands(bands);
}
