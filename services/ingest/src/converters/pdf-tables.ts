// Tables of a PDF page. A PDF has no table structure, only text and drawn lines, so tables are
// rebuilt two ways: from ruling lines (the cell borders a word processor draws, read from the
// page's operator list) and, in pdf-flow.ts, from text aligned in columns over several rows.
// Both are conservative: a false table scrambles prose, which is worse than a missed one.
import { type LayoutTable, mainRun, shifted, type TextItem } from "./pdf-layout.js";

/** A horizontal (y fixed) or vertical (x fixed) ruling line, in points, y growing upwards. */
export interface Rule {
  at: number;
  from: number;
  to: number;
}

export interface PageRules {
  horizontal: Rule[];
  vertical: Rule[];
}

// pdfjs operator ids (pdfjs-dist OPS) and path commands (DrawOPS) this module reads.
const OP = {
  save: 10,
  restore: 11,
  transform: 12,
  stroke: 20,
  closeStroke: 21,
  fill: 22,
  eoFill: 23,
  fillStroke: 24,
  eoFillStroke: 25,
  closeFillStroke: 26,
  closeEOFillStroke: 27,
  formBegin: 74,
  formEnd: 75,
  constructPath: 91,
} as const;
const DRAW = { moveTo: 0, lineTo: 1, curveTo: 2, closePath: 3 } as const;
const STROKES: ReadonlySet<number> = new Set([
  OP.stroke,
  OP.closeStroke,
  OP.fillStroke,
  OP.eoFillStroke,
  OP.closeFillStroke,
  OP.closeEOFillStroke,
]);
const FILLS: ReadonlySet<number> = new Set([
  OP.fill,
  OP.eoFill,
  OP.fillStroke,
  OP.eoFillStroke,
  OP.closeFillStroke,
  OP.closeEOFillStroke,
]);

// A filled rectangle at most this thick (points) is a drawn rule (Word draws cell borders so).
const RULE_THICKNESS = 2.5;
// Shorter strokes are glyph-like marks (check boxes, underlines of one letter), not rules.
const MIN_RULE = 6;
// Rules this close (points) are one; a rule ending this close to another meets it.
const SNAP = 2;
// Pages drawing more path pieces than this are figures or charts: no rule reading (bounded time).
const MAX_PATH_PIECES = 4000;

type Matrix = [number, number, number, number, number, number];
const multiply = (m: Matrix, n: Matrix): Matrix => [
  m[0] * n[0] + m[2] * n[1],
  m[1] * n[0] + m[3] * n[1],
  m[0] * n[2] + m[2] * n[3],
  m[1] * n[2] + m[3] * n[3],
  m[0] * n[4] + m[2] * n[5] + m[4],
  m[1] * n[4] + m[3] * n[5] + m[5],
];
const apply = (m: Matrix, x: number, y: number): [number, number] => [
  m[0] * x + m[2] * y + m[4],
  m[1] * x + m[3] * y + m[5],
];

/**
 * The horizontal and vertical ruling lines a page draws, from pdfjs's operator list
 * (`fnArray`/`argsArray` of `page.getOperatorList()`). `toPage` maps user space to the
 * layout's points (y up). Stroked straight segments and thin filled rectangles count; curves,
 * slanted lines and large fills (shading, bars of a chart) do not. Returns no rules for a page
 * with more than MAX_PATH_PIECES pieces of path, so a plot cannot slow the import down.
 */
export function pageRules(
  fnArray: readonly number[],
  argsArray: readonly unknown[],
  toPage: (x: number, y: number) => [number, number],
): PageRules {
  const horizontal: Rule[] = [];
  const vertical: Rule[] = [];
  let ctm: Matrix = [1, 0, 0, 1, 0, 0];
  const stack: Matrix[] = [];
  let pieces = 0;
  const add = (x0: number, y0: number, x1: number, y1: number) => {
    const [ax, ay] = toPage(...apply(ctm, x0, y0));
    const [bx, by] = toPage(...apply(ctm, x1, y1));
    if (Math.abs(ay - by) <= 0.5 && Math.abs(ax - bx) >= MIN_RULE)
      horizontal.push({ at: (ay + by) / 2, from: Math.min(ax, bx), to: Math.max(ax, bx) });
    else if (Math.abs(ax - bx) <= 0.5 && Math.abs(ay - by) >= MIN_RULE)
      vertical.push({ at: (ax + bx) / 2, from: Math.min(ay, by), to: Math.max(ay, by) });
  };
  for (let i = 0; i < fnArray.length; i++) {
    const fn = fnArray[i];
    const args = argsArray[i] as unknown[] | null;
    if (fn === OP.save) stack.push(ctm);
    else if (fn === OP.restore) ctm = stack.pop() ?? ctm;
    else if (fn === OP.transform && args) ctm = multiply(ctm, args as unknown as Matrix);
    else if (fn === OP.formBegin && args) {
      stack.push(ctm);
      if (Array.isArray(args[0]) || ArrayBuffer.isView(args[0]))
        ctm = multiply(ctm, Array.from(args[0] as ArrayLike<number>) as Matrix);
    } else if (fn === OP.formEnd) ctm = stack.pop() ?? ctm;
    else if (fn === OP.constructPath && args) {
      const paint = args[0] as number;
      const buffer = (args[1] as (ArrayLike<number> | null)[] | undefined)?.[0];
      if (!buffer || !(STROKES.has(paint) || FILLS.has(paint))) continue;
      pieces += buffer.length / 3;
      if (pieces > MAX_PATH_PIECES) return { horizontal: [], vertical: [] };
      for (const sub of subpaths(buffer)) {
        if (STROKES.has(paint))
          for (let k = 1; k < sub.length; k++) add(sub[k - 1][0], sub[k - 1][1], sub[k][0], sub[k][1]);
        if (FILLS.has(paint) && sub.length >= 4) {
          // A thin filled rectangle: its long middle line is the rule.
          const corners = sub.map(([x, y]) => toPage(...apply(ctm, x, y)));
          const xs = corners.map((c) => c[0]);
          const ys = corners.map((c) => c[1]);
          const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
          const rectangular = corners.every(
            ([x, y]) =>
              (Math.abs(x - x0) < 0.5 || Math.abs(x - x1) < 0.5) && (Math.abs(y - y0) < 0.5 || Math.abs(y - y1) < 0.5),
          );
          if (!rectangular) continue;
          if (y1 - y0 <= RULE_THICKNESS && x1 - x0 >= MIN_RULE)
            horizontal.push({ at: (y0 + y1) / 2, from: x0, to: x1 });
          else if (x1 - x0 <= RULE_THICKNESS && y1 - y0 >= MIN_RULE)
            vertical.push({ at: (x0 + x1) / 2, from: y0, to: y1 });
        }
      }
    }
  }
  return { horizontal: merge(horizontal), vertical: merge(vertical) };
}

/** The straight subpaths of a path buffer as point lists (closed ones end at their start); curves drop a subpath. */
function subpaths(buffer: ArrayLike<number>): [number, number][][] {
  const out: [number, number][][] = [];
  let current: [number, number][] = [];
  let curved = false;
  const end = () => {
    if (!curved && current.length >= 2) out.push(current);
    current = [];
    curved = false;
  };
  for (let i = 0; i < buffer.length; ) {
    const op = buffer[i++];
    if (op === DRAW.moveTo) {
      end();
      current.push([buffer[i++], buffer[i++]]);
    } else if (op === DRAW.lineTo) current.push([buffer[i++], buffer[i++]]);
    else if (op === DRAW.curveTo) {
      curved = true;
      i += 6;
    } else if (op === DRAW.closePath) {
      if (current.length > 0) current.push(current[0]);
    } else break;
  }
  end();
  return out;
}

/** Collinear rules that touch or overlap become one. */
function merge(rules: Rule[]): Rule[] {
  const sorted = [...rules].sort((a, b) => a.at - b.at || a.from - b.from);
  const out: Rule[] = [];
  for (const rule of sorted) {
    // Sorted by position then start, so only the last rule can continue.
    const same = out[out.length - 1];
    if (same && Math.abs(same.at - rule.at) <= 1 && rule.from <= same.to + SNAP) same.to = Math.max(same.to, rule.to);
    else out.push({ ...rule });
  }
  return out;
}

/** Values within SNAP of each other are one (sorted ascending). */
function cluster(values: number[]): number[] {
  const out: number[] = [];
  for (const v of [...values].sort((a, b) => a - b))
    if (out.length === 0 || v - out[out.length - 1] > SNAP) out.push(v);
  return out;
}

// A grid is a table only when at least this share of its cells hold text (a chart's grid or a
// frame around a figure is mostly empty).
const MIN_FILLED_SHARE = 0.5;

/**
 * Tables drawn with ruling lines: groups of horizontal and vertical rules that cross each other
 * (at least two of each) make a grid; its column and row boundaries are the distinct rule
 * positions, and each text item goes to the cell holding its middle (so a cell spanning columns
 * keeps its text in its first column). A grid is kept when, after dropping empty rows and
 * columns, it has two rows and two columns and half its cells hold text. Items placed in a table
 * get `table` set to the table's index. Rows are top to bottom, cells left to right.
 */
export function ruledTables(rules: PageRules, items: TextItem[]): LayoutTable[] {
  const { horizontal: hs, vertical: vs } = rules;
  if (hs.length < 2 || vs.length < 2) return [];
  // Union-find over rules: a horizontal and a vertical that cross are one grid.
  const parent = Array.from({ length: hs.length + vs.length }, (_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]];
      i = parent[i];
    }
    return i;
  };
  hs.forEach((h, i) => {
    vs.forEach((v, j) => {
      if (v.at >= h.from - SNAP && v.at <= h.to + SNAP && h.at >= v.from - SNAP && h.at <= v.to + SNAP)
        parent[find(i)] = find(hs.length + j);
    });
  });
  const groups = new Map<number, { h: Rule[]; v: Rule[] }>();
  hs.forEach((h, i) => {
    const g = groups.get(find(i)) ?? { h: [], v: [] };
    g.h.push(h);
    groups.set(find(i), g);
  });
  vs.forEach((v, j) => {
    const g = groups.get(find(hs.length + j)) ?? { h: [], v: [] };
    g.v.push(v);
    groups.set(find(hs.length + j), g);
  });
  const tables: LayoutTable[] = [];
  for (const { h, v } of groups.values()) {
    if (h.length < 2 || v.length < 2) continue;
    const xs = cluster([...v.map((r) => r.at), ...h.map((r) => r.from), ...h.map((r) => r.to)]);
    const ys = cluster([...h.map((r) => r.at), ...v.map((r) => r.from), ...v.map((r) => r.to)]).reverse();
    if (xs.length < 3 || ys.length < 3) continue;
    const [left, right, top, bottom] = [xs[0], xs[xs.length - 1], ys[0], ys[ys.length - 1]];
    let cells: TextItem[][][] = ys.slice(1).map(() => xs.slice(1).map(() => []));
    const inside: TextItem[] = [];
    for (const item of items) {
      if (item.table !== undefined || item.str.trim() === "") continue;
      const cx = item.x + item.width / 2;
      // The middle of the glyphs, a bit above the baseline.
      const cy = item.y + item.height * 0.3;
      if (cx <= left || cx >= right || cy >= top || cy <= bottom) continue;
      const col = xs.findIndex((x) => x > cx) - 1;
      const row = ys.findIndex((y) => y < cy) - 1;
      if (col < 0 || row < 0) continue;
      cells[row][col].push(item);
      inside.push(item);
    }
    cells = cells.flatMap(splitTextRows);
    const keepRows = cells.map((r) => r.some((c) => c.length > 0));
    const keepCols = xs.slice(1).map((_, c) => cells.some((r) => r[c].length > 0));
    const rows = cells.filter((_, r) => keepRows[r]).map((r) => r.filter((_, c) => keepCols[c]));
    const width = rows[0]?.length ?? 0;
    const filled = rows.reduce((n, r) => n + r.filter((c) => c.length > 0).length, 0);
    if (rows.length < 2 || width < 2 || filled < rows.length * width * MIN_FILLED_SHARE) continue;
    const index = tables.length;
    for (const item of inside) item.table = index;
    tables.push({ kind: "table", y: top, rows: rows.map((r) => r.map(cellText)) });
  }
  return tables;
}

// Ruled tables often draw a rule only every few rows (dense numeric tables): a grid row holding
// at least this many text lines of short cells is split into one row per line.
const MIN_SUB_ROWS = 3;
const MAX_SUB_ROW_CHARS = 15;

/**
 * A grid row split into one row per text line, when its cells are stacked short entries on
 * shared baselines (at least two cells have text on 80% of the row's baselines); otherwise the
 * row as it is (a cell wrapping its text over lines stays one cell).
 */
function splitTextRows(row: TextItem[][]): TextItem[][][] {
  const items = row.flat();
  const baselines: number[] = [];
  for (const item of [...items].sort((a, b) => b.y - a.y)) {
    const last = baselines[baselines.length - 1];
    if (last === undefined || last - item.y > item.height * 0.5) baselines.push(item.y);
  }
  if (baselines.length < MIN_SUB_ROWS) return [row];
  const lengths = items.map((i) => i.str.trim().length).sort((a, b) => a - b);
  if (lengths[Math.floor(lengths.length / 2)] > MAX_SUB_ROW_CHARS) return [row];
  const lineOf = (item: TextItem) => {
    let best = 0;
    baselines.forEach((b, k) => {
      if (Math.abs(b - item.y) < Math.abs(baselines[best] - item.y)) best = k;
    });
    return best;
  };
  const stacked = row.filter((cell) => new Set(cell.map(lineOf)).size >= baselines.length * 0.8).length;
  if (stacked < 2) return [row];
  return baselines.map((_, k) => row.map((cell) => cell.filter((item) => lineOf(item) === k)));
}

/**
 * A cell's items read line by line (top to bottom, left to right). A line ending in a hyphen is
 * followed by "\n" and the next line, for pdf-flow.ts to join by the document's hyphenation rule.
 */
function cellText(items: TextItem[]): string {
  // Lines by baseline first: a footnote mark sits a little above its figure and must stay after it.
  const lines: TextItem[][] = [];
  for (const item of [...items].sort((a, b) => b.y - a.y || a.x - b.x)) {
    const line = lines[lines.length - 1];
    const first = line?.[0];
    if (first && Math.abs(first.y - item.y) <= Math.max(first.height, item.height) * 0.5) line.push(item);
    else lines.push([item]);
  }
  let out = "";
  let prev: TextItem | null = null;
  for (const line of lines) {
    const main = mainRun(line);
    line.sort((a, b) => a.x - b.x);
    for (const item of line) {
      const str = shifted({ ...item, str: item.str.trim() }, main);
      if (prev === null) out = str;
      else if (line.includes(prev)) {
        const gap = item.x - (prev.x + prev.width);
        out += gap > (item.height || 10) * 0.15 ? ` ${str}` : str;
      } else out += /\p{L}[-\u2010\u00ad\u2027]$/u.test(out) && /^\p{L}/u.test(str) ? `\n${str}` : ` ${str}`;
      prev = item;
    }
  }
  return out.replace(/[^\S\n]+/g, " ").trim();
}
