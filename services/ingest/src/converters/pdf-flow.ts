// From a PDF's lines in reading order (pdf-layout.ts) to HTML blocks: running headers and
// footers taken out as out-of-flow parts, paragraphs rebuilt across line, column and page
// breaks, line-end hyphenation undone where the document shows the word is one, headings
// recognised by font size and weight, and tables rebuilt from aligned columns.
import { escapeHtml } from "../html/util.js";
import { type LayoutEntry, type LayoutLine, plainText, scriptHtml } from "./pdf-layout.js";

/** A flow text as HTML: escaped, its superscript and subscript marks as <sup> and <sub>. */
export const textHtml = (text: string) => scriptHtml(text, escapeHtml);

/** One page's lines and ruled tables in reading order, and its height in points. */
export interface FlowPage {
  entries: LayoutEntry[];
  height: number;
}

// Running headers (footers) sit in the top (bottom) band of this share of the page height.
const RUNNING_ZONE = 0.15;
const LIST_MARKER = /^(?:[•◦▪‣∙·*-]|\(?\d{1,3}[.)]|\(?[a-z][.)])\s/i;
const PAGE_NUMBER = /^[#\s\-–—/|.]*$|^page\s*#(\s*(of|\/)\s*#)?$/i;
/**
 * A line as compared across pages: page numbers vary, so digits do not count, and word order
 * does not either (facing pages put the number on the outer side), as in pdf-page-setup.ts.
 */
const lineKey = (text: string) => text.trim().toLowerCase().replace(/\d+/g, "#").split(/\s+/).sort().join(" ");

// A running line has at most this many parts (a title and a page number); more is a table row.
const MAX_RUNNING_CELLS = 2;

/**
 * Running headers and footers: lines in the top (bottom) RUNNING_ZONE of a page whose text,
 * digits aside, recurs in that band on at least two pages and half of them. Lines are taken by
 * height, not content order (a producer may write a page number apart from its header). They
 * are taken out of every page and returned once each (top to bottom) with the words all pages
 * share, to become out-of-flow parts; page numbers alone are dropped. A row of three cells or
 * more (a table's header row repeated on each page) stays.
 */
export function runningParts(pages: FlowPage[]): { headers: string[]; footers: string[]; pages: LayoutEntry[][] } {
  type Band = "top" | "bottom";
  const band = (line: LayoutLine, height: number): Band | null =>
    line.y >= height * (1 - RUNNING_ZONE) ? "top" : line.y <= height * RUNNING_ZONE ? "bottom" : null;
  // Per page: the band's lines at one height, as one text.
  const groups = pages.map((page) => {
    const inBand = page.entries
      .filter((e): e is LayoutLine => e.kind === "line" && e.text.trim() !== "" && band(e, page.height) !== null)
      .sort((a, b) => b.y - a.y || a.left - b.left);
    const out: { where: Band; lines: LayoutLine[]; text: string; key: string }[] = [];
    for (const line of inBand) {
      const last = out[out.length - 1];
      if (last && Math.abs(last.lines[0].y - line.y) <= Math.max(line.height, last.lines[0].height) * 0.5)
        last.lines.push(line);
      else out.push({ where: band(line, page.height) as Band, lines: [line], text: "", key: "" });
    }
    for (const g of out) {
      g.lines.sort((a, b) => a.left - b.left);
      g.text = g.lines
        .flatMap((l) => l.cells.map((c) => c.text.trim()))
        .filter((t) => t !== "")
        .join(" ");
      g.key = `${g.where}:${lineKey(g.text)}`;
    }
    return out.filter(
      (g) => g.lines.reduce((n, l) => n + l.cells.filter((c) => c.text.trim() !== "").length, 0) <= MAX_RUNNING_CELLS,
    );
  });
  const seen = new Map<string, number>();
  for (const page of groups) for (const key of new Set(page.map((g) => g.key))) seen.set(key, (seen.get(key) ?? 0) + 1);
  const needed = Math.max(2, Math.ceil(pages.length / 2));
  const found = { top: new Map<string, string[]>(), bottom: new Map<string, string[]>() };
  const out = pages.map((page, n) => {
    const taken = new Set<LayoutEntry>();
    for (const g of groups[n]) {
      if ((seen.get(g.key) ?? 0) < needed) continue;
      for (const l of g.lines) taken.add(l);
      // A bare page number is layout, not a part anyone wants back.
      if (PAGE_NUMBER.test(g.text.replace(/\d+/g, "#"))) continue;
      const texts = found[g.where].get(g.key) ?? [];
      texts.push(g.text);
      found[g.where].set(g.key, texts);
    }
    return page.entries.filter((e) => !taken.has(e));
  });
  // The part keeps the words every page shares: the page number ("-2-") goes, a year stays.
  const shared = (texts: string[]) => {
    const words = texts.map((t) => new Set(t.split(/\s+/)));
    return texts[0]
      .split(/\s+/)
      .filter((w) => words.every((set) => set.has(w)))
      .join(" ");
  };
  return {
    headers: [...found.top.values()].map(shared).filter((t) => t !== ""),
    footers: [...found.bottom.values()].map(shared).filter((t) => t !== ""),
    pages: out,
  };
}

/** A number ending a line with a hyphen or dash (the first half of a range or a date). */
const NUMBER_HYPHEN = /\d[-\u2010\u2013]$/u;
/** A word cut at the line's end by a hyphen, a Unicode hyphen or a soft hyphen. */
const LINE_END_HYPHEN = /\p{L}[-\u2010\u00ad\u2027]$/u;

/**
 * Decides whether a word split at a line end ("adip-" + "iscing") is one word. There is no
 * dictionary; the document is the evidence. The hyphen goes when the joined word occurs
 * elsewhere in the document (any case: "Trace-" + "Monkey" is "TraceMonkey" there). Otherwise
 * it stays when the hyphenated form occurs within a line (a real compound, "well-known"), when
 * the continuation starts with a capital ("Franco-German"), when one letter precedes it
 * ("x-axis": hyphenation leaves at least two), or when both halves are words of three letters
 * or more that the document uses on their own (again a compound). Otherwise the hyphen goes:
 * layout hyphenation splits at syllables, which are rarely words.
 */
export class Hyphenation {
  private readonly words = new Set<string>();
  private readonly compounds = new Set<string>();

  /** Learns the words of the document's lines (in reading order), leaving out the halves of line-end splits. */
  constructor(lines: readonly string[]) {
    let afterSplit = false;
    for (const line of lines) {
      const tokens = line.match(/\p{L}+(?:[-\u2010]\p{L}+)*[-\u2010\u00ad\u2027]?/gu) ?? [];
      const split = LINE_END_HYPHEN.test(line.trimEnd());
      tokens.forEach((token, i) => {
        if ((i === 0 && afterSplit) || (i === tokens.length - 1 && split)) return;
        const word = token
          .replace(/[-\u2010\u00ad\u2027]$/u, "")
          .replace(/\u2010/gu, "-")
          .toLowerCase();
        if (word.includes("-")) {
          this.compounds.add(word);
          for (const part of word.split("-")) this.words.add(part);
        } else this.words.add(word);
      });
      afterSplit = split;
    }
  }

  /** `before` + `after` as one text, `before` ending in a line-end hyphen. */
  join(before: string, after: string): string {
    // A soft hyphen (or the "hyphenation point" some producers map it to) is always a break.
    if (/[\u00ad\u2027]$/u.test(before)) return before.slice(0, -1) + after;
    const stem = /(\p{L}+)[-\u2010]$/u.exec(before)?.[1];
    const cont = /^\p{L}+/u.exec(after)?.[0];
    if (!stem || !cont) return before + after;
    const joined = (stem + cont).toLowerCase();
    const compound = `${stem}-${cont}`.toLowerCase();
    const keep =
      !this.words.has(joined) &&
      (!/^\p{Ll}/u.test(cont) ||
        stem.length === 1 ||
        this.compounds.has(compound) ||
        (stem.length >= 3 &&
          cont.length >= 3 &&
          this.words.has(stem.toLowerCase()) &&
          this.words.has(cont.toLowerCase())));
    return keep ? before + after : before.slice(0, -1) + after;
  }
}

/** Where a page's column holds its text: the usual left and right edges and the typical line length. */
interface ColumnMeasure {
  left: number;
  right: number;
  typicalChars: number;
}

const percentile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) * q)] ?? 0;
};

// Edges are read where most lines reach (so an indent or a short last line does not move them).
const EDGE_PERCENTILE = 0.85;
// A line reaching this share of its column's width is full: the paragraph goes on below it.
const FULL_LINE_SHARE = 0.75;
// Across a column or page break the last line must reach the column's edge (within this share).
const EDGE_SLACK_SHARE = 0.08;
// Print this much smaller than an open paragraph's is a footnote or caption beside its flow.
const ASIDE_SIZE_RATIO = 0.9;
// Columns whose typical line is shorter than this are not prose (slides, forms): no reflow.
const MIN_REFLOW_LINE = 30;

function measureColumns(entries: LayoutEntry[]): Map<number, ColumnMeasure> {
  const byColumn = new Map<number, LayoutLine[]>();
  for (const e of entries) {
    if (e.kind !== "line" || e.text.trim() === "") continue;
    const lines = byColumn.get(e.column);
    if (lines) lines.push(e);
    else byColumn.set(e.column, [e]);
  }
  const all = [...byColumn.values()].flat();
  const measure = (lines: LayoutLine[]): ColumnMeasure => ({
    left: percentile(
      lines.map((l) => l.left),
      1 - EDGE_PERCENTILE,
    ),
    right: percentile(
      lines.map((l) => l.right),
      EDGE_PERCENTILE,
    ),
    typicalChars: percentile(
      lines.map((l) => l.text.trim().length),
      0.8,
    ),
  });
  const out = new Map<number, ColumnMeasure>();
  for (const [column, lines] of byColumn) out.set(column, measure(lines.length >= 3 ? lines : all));
  return out;
}

// Headings: at least this much larger than the body text, short, and not ending a sentence mid-list.
const HEADING_SIZE_RATIO = 1.15;
const MAX_HEADING_CHARS = 160;
export const MAX_BOLD_HEADING_CHARS = 90;
// A heading line narrower than this share of its column ends the heading.
const HEADING_MAX_WIDTH_SHARE = 0.6;

/** The body text's font size: the size most characters are set in (rounded to half points). */
function bodySize(lines: LayoutLine[]): number {
  const chars = new Map<number, number>();
  for (const l of lines) {
    const size = Math.round(l.height * 2) / 2;
    chars.set(size, (chars.get(size) ?? 0) + l.text.length);
  }
  let best = 10;
  let most = -1;
  for (const [size, n] of chars)
    if (n > most) {
      best = size;
      most = n;
    }
  return best;
}

// Aligned-column tables: at least this many rows, and cells no longer than prose fragments.
const MIN_ALIGNED_ROWS = 3;
const MAX_MEDIAN_CELL_CHARS = 40;

/**
 * Rows of cells (lines split at wide gaps) as a table when they line up: the cells' x extents,
 * merged where they overlap, give the columns; at least MIN_ALIGNED_ROWS rows and two columns,
 * most rows using two columns or more, short cells, and every column after the first aligned
 * on its left, right or middle (prose split at a wide gap is not a table). Returns the rows'
 * cells per column, or null.
 */
export function alignedTable(lines: LayoutLine[]): string[][] | null {
  if (lines.length < MIN_ALIGNED_ROWS) return null;
  const spans = lines
    .flatMap((l) => l.cells.filter((c) => c.text.trim() !== ""))
    .map((c) => [c.left, c.right] as [number, number])
    .sort((a, b) => a[0] - b[0]);
  const columns: [number, number][] = [];
  for (const [l, r] of spans) {
    const last = columns[columns.length - 1];
    if (last && l <= last[1]) last[1] = Math.max(last[1], r);
    else columns.push([l, r]);
  }
  if (columns.length < 2) return null;
  const lengths = lines.flatMap((l) => l.cells.map((c) => c.text.trim().length)).filter((n) => n > 0);
  if (percentile(lengths, 0.5) > MAX_MEDIAN_CELL_CHARS) return null;
  const rows = lines.map((line) => {
    const row = columns.map(() => "");
    for (const cell of line.cells) {
      if (cell.text.trim() === "") continue;
      const k = columns.findIndex(([l, r]) => cell.left >= l && cell.left <= r);
      row[k] = row[k] ? `${row[k]} ${cell.text.trim()}` : cell.text.trim();
    }
    return row;
  });
  const multi = rows.filter((r) => r.filter((c) => c !== "").length >= 2).length;
  if (multi * 2 < rows.length) return null;
  // Each column after the first lines up on its left edge, right edge or middle (within an
  // em); a wide word gap in justified prose falls at a different place on every line.
  for (let k = 1; k < columns.length; k++) {
    const cells = lines.flatMap((l) =>
      l.cells.filter((c) => c.text.trim() !== "" && c.left >= columns[k][0] && c.left <= columns[k][1]),
    );
    const em = Math.max(...lines.map((l) => l.height));
    const spread = (values: number[]) => Math.max(...values) - Math.min(...values);
    const aligned =
      spread(cells.map((c) => c.left)) <= em ||
      spread(cells.map((c) => c.right)) <= em ||
      spread(cells.map((c) => (c.left + c.right) / 2)) <= em;
    if (!aligned) return null;
  }
  return rows;
}

const tableHtml = (rows: string[][]) =>
  `<table><tbody>${rows.map((r) => `<tr>${r.map((c) => `<td>${textHtml(c)}</td>`).join("")}</tr>`).join("")}</tbody></table>`;

/**
 * The document's blocks as HTML, from its pages' entries in reading order (running parts
 * already taken out). A paragraph goes on below a full line (FULL_LINE_SHARE of its column);
 * across a column or page break it goes on when its last line reaches the column's edge and
 * ends without terminal punctuation, and the next line is in the same font size. A list marker,
 * a paragraph gap, a heading or a line after a colon starts a new block. Lines at least
 * HEADING_SIZE_RATIO larger than the body become h1..h3 by size rank (largest first); a short
 * bold line standing alone, in a document whose body is not bold, takes the next level. Runs of
 * rows with cells become a table when they line up (alignedTable), else paragraphs.
 */
export function flowToHtml(pages: LayoutEntry[][]): string[] {
  const lines = pages.flat().filter((e): e is LayoutLine => e.kind === "line" && e.text.trim() !== "");
  const body = bodySize(lines);
  const bodyBold =
    lines.filter((l) => l.bold).reduce((n, l) => n + l.text.length, 0) * 2 >
    lines.reduce((n, l) => n + l.text.length, 0);
  const sizeKey = (l: LayoutLine) => Math.round(l.height * 2) / 2;
  const large = (l: LayoutLine) =>
    l.height >= body * HEADING_SIZE_RATIO &&
    l.text.length <= MAX_HEADING_CHARS &&
    /\p{L}/u.test(l.text) &&
    l.cells.length === 1;
  // A size whose lines all say the same thing, more than once, is a label (an icon's
  // "CAUTION!"), not a level of headings.
  const textsBySize = new Map<number, string[]>();
  for (const l of lines.filter(large)) {
    const texts = textsBySize.get(sizeKey(l));
    if (texts) texts.push(l.text.trim());
    else textsBySize.set(sizeKey(l), [l.text.trim()]);
  }
  const labelSizes = new Set(
    [...textsBySize].filter(([, texts]) => texts.length > 1 && new Set(texts).size === 1).map(([size]) => size),
  );
  const largeHeading = (l: LayoutLine) => large(l) && !labelSizes.has(sizeKey(l));
  const headingSizes = [...textsBySize.keys()].filter((size) => !labelSizes.has(size)).sort((a, b) => b - a);
  const levelOf = (l: LayoutLine) => Math.min(3, headingSizes.indexOf(sizeKey(l)) + 1);
  const boldLevel = Math.min(3, headingSizes.length + 1);
  const hyphenation = new Hyphenation(lines.map((l) => l.text));

  const blocks: string[] = [];
  let para: { text: string; last: LayoutLine; measure: ColumnMeasure; size: number } | null = null;
  let heading: { text: string; level: number; last: LayoutLine } | null = null;
  // Rows of cells waiting to be read as a table, each with what its line would need as prose.
  let rows: { entry: LayoutLine; brk: LayoutLine["breakBefore"]; measure: ColumnMeasure }[] = [];
  // Smaller print met while a paragraph is open at a column's end (a footnote under the
  // column): it is set aside and follows the paragraph, which goes on in the next column.
  let aside: { text: string; last: LayoutLine }[] = [];
  const flushPara = () => {
    if (para) blocks.push(`<p>${textHtml(para.text)}</p>`);
    for (const a of aside) blocks.push(`<p>${textHtml(a.text)}</p>`);
    para = null;
    aside = [];
  };
  /**
   * The paragraph stops at its column's edge mid-sentence: it may go on after a column or page
   * break. The edge is the column's, or, in ragged-right text, wherever `next`'s first word
   * would not have fitted after the last line.
   */
  const open = (p: { text: string; last: LayoutLine; measure: ColumnMeasure }, next?: LayoutLine) => {
    // A footnote mark after the full stop does not hide it.
    if (p.measure.typicalChars < MIN_REFLOW_LINE || /[.!?:;]["'”’)\]]?$/.test(plainText(p.text, false).trimEnd()))
      return false;
    const slack = Math.max(1, p.measure.right - p.measure.left) * EDGE_SLACK_SHARE;
    if (p.last.right >= p.measure.right - slack) return true;
    if (!next) return false;
    const word = /^\S+/.exec(next.text.trim())?.[0] ?? "";
    const charWidth = (next.right - next.left) / Math.max(1, next.text.trim().length);
    return p.last.right + (word.length + 1) * charWidth > p.measure.right;
  };
  const flushHeading = () => {
    if (heading) blocks.push(`<h${heading.level}>${textHtml(heading.text)}</h${heading.level}>`);
    heading = null;
  };
  const append = (before: string, after: string) =>
    LINE_END_HYPHEN.test(before)
      ? hyphenation.join(before, after)
      : // A range or date broken at its hyphen ("1950-" / "2003") is one token, hyphen kept.
        NUMBER_HYPHEN.test(before) && /^\d/.test(after)
        ? before + after
        : `${before} ${after}`;

  /** One line of text: a heading, an aside, the next line of the open paragraph, or a new one. */
  const handleLine = (
    entry: LayoutLine,
    text: string,
    brk: LayoutLine["breakBefore"],
    next: LayoutEntry | undefined,
    measure: ColumnMeasure,
  ) => {
    const standsAlone =
      brk !== "none" || para === null || !(para as { last: LayoutLine }).last.bold || heading !== null;
    const nextBreaks = !next || next.kind === "table" || next.breakBefore !== "none" || !next.bold;
    let level = 0;
    if (largeHeading(entry)) level = levelOf(entry);
    else if (
      entry.bold &&
      !bodyBold &&
      (text.match(/\p{L}/gu)?.length ?? 0) >= 3 &&
      // A bold line running to the column's edge goes on in the next line: a paragraph, not a heading.
      entry.right < measure.left + (measure.right - measure.left) * HEADING_MAX_WIDTH_SHARE &&
      Math.abs(entry.height - body) < body * 0.15 &&
      text.length <= MAX_BOLD_HEADING_CHARS &&
      !/[.,;:]$/.test(text) &&
      !LIST_MARKER.test(text) &&
      standsAlone &&
      nextBreaks
    )
      level = boldLevel;
    if (level > 0) {
      flushPara();
      const h = heading as { text: string; level: number; last: LayoutLine } | null;
      // A heading wraps onto the next line only after a line that filled most of the column.
      const wrapped =
        h !== null && h.last.right >= measure.left + (measure.right - measure.left) * HEADING_MAX_WIDTH_SHARE;
      if (h && wrapped && h.level === level && brk === "none" && sizeKey(h.last) === sizeKey(entry)) {
        h.text = append(h.text, text);
        h.last = entry;
      } else {
        flushHeading();
        heading = { text, level, last: entry };
      }
      return;
    }
    flushHeading();
    const p = para as { text: string; last: LayoutLine; measure: ColumnMeasure; size: number } | null;
    if (p && entry.height < p.size * ASIDE_SIZE_RATIO && (aside.length > 0 || (brk !== "none" && open(p)))) {
      const last = aside[aside.length - 1];
      if (last && brk === "none") {
        last.text = append(last.text, text);
        last.last = entry;
      } else aside.push({ text, last: entry });
      return;
    }
    let goesOn = false;
    if (p && !LIST_MARKER.test(text) && !p.text.endsWith(":") && Math.abs(p.size - entry.height) < 1) {
      const width = Math.max(1, p.measure.right - p.measure.left);
      const prose = p.measure.typicalChars >= MIN_REFLOW_LINE;
      if (brk === "none") goesOn = prose && p.last.right >= p.measure.left + width * FULL_LINE_SHARE;
      else if (brk === "column") goesOn = open(p, entry);
    }
    if (p && goesOn) {
      p.text = append(p.text, text);
      p.last = entry;
      p.measure = measure;
    } else {
      flushPara();
      para = { text, last: entry, measure, size: entry.height };
    }
  };
  /** Waiting rows: a table when they line up, else lines of text like any other. */
  const flushRows = () => {
    const waiting = rows;
    rows = [];
    const table = alignedTable(waiting.map((r) => r.entry));
    if (table) {
      flushHeading();
      flushPara();
      blocks.push(tableHtml(table));
    } else
      for (const r of waiting) {
        const text = r.entry.cells
          .map((c) => c.text.trim())
          .join(" ")
          .trim();
        handleLine(r.entry, text, r.brk, undefined, r.measure);
      }
  };

  pages.forEach((entries, pageIndex) => {
    const measures = measureColumns(entries);
    entries.forEach((entry, i) => {
      if (entry.kind === "table") {
        flushRows();
        flushHeading();
        flushPara();
        // A cell's line-end hyphens (kept as "-\n" by pdf-tables.ts) follow the body's rule.
        blocks.push(
          tableHtml(entry.rows.map((r) => r.map((cell) => cell.split("\n").reduce((a, b) => hyphenation.join(a, b))))),
        );
        return;
      }
      const text = entry.text.trim();
      if (text === "") return;
      // A page break is a column break.
      const brk = i === 0 && pageIndex > 0 && entry.breakBefore === "none" ? "column" : entry.breakBefore;
      const measure = measures.get(entry.column) ?? { left: entry.left, right: entry.right, typicalChars: text.length };
      if (entry.cells.filter((c) => c.text.trim() !== "").length >= 2) {
        if (brk === "column") flushRows();
        rows.push({ entry, brk, measure });
        return;
      }
      flushRows();
      let next: LayoutEntry | undefined;
      for (let k = i + 1; k < entries.length && !next; k++) {
        const e = entries[k];
        if (e.kind === "table" || e.text.trim() !== "") next = e;
      }
      handleLine(entry, text, brk, next, measure);
    });
  });
  flushRows();
  flushHeading();
  flushPara();
  return blocks;
}
