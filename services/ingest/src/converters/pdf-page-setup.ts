// Page setup of a PDF: the paper from each page's visible box and /Rotate, the margins inferred
// from where the body text sits. A PDF records no margins, so they are an estimate, made on
// the displayed page (y down from the top edge, after rotation) so that MediaBox/CropBox
// offsets and /Rotate need no special case further on.

import { paperSize } from "../docx/page-setup.js";
import type { PageMargins, PageSetup } from "../formats.js";

const POINTS_PER_INCH = 72;

/** A run of text as shown on the displayed page, in points, y growing down from the top edge. */
export interface TextBox {
  text: string;
  left: number;
  top: number;
  right: number;
  bottom: number;
  /** Font size in points. */
  size: number;
}

/** One displayed page: its size in points (rotation applied) and its horizontal text runs. */
export interface PageGeometry {
  width: number;
  height: number;
  boxes: TextBox[];
}

/** What pdfjs gives for one text item (the fields this module reads). */
export interface PdfTextItem {
  str: string;
  /** Text space → PDF user space, [a, b, c, d, e, f]. */
  transform: number[];
  /** Advance along the text direction, in user space units. */
  width: number;
  fontName: string;
}

/** Font metrics pdfjs reports per font name (em fractions; descent is negative). */
export interface PdfTextStyle {
  ascent: number;
  descent: number;
  vertical: boolean;
}

// pdfjs reports 0 or nonsense for fonts without usable metrics; these are typical Latin values.
const DEFAULT_ASCENT = 0.8;
const DEFAULT_DESCENT = -0.2;

const apply = (m: number[], x: number, y: number): [number, number] => [
  m[0] * x + m[2] * y + m[4],
  m[1] * x + m[3] * y + m[5],
];

/**
 * The text runs of a page placed on the displayed page. `viewport` is pdfjs's
 * `getViewport({scale: 1}).transform` (user space → points from the top-left corner of the
 * visible box, rotation applied). Each run's box spans its advance and the font's ascent to
 * descent. Runs that do not read left to right on the displayed page (a sideways stamp in the
 * margin, vertical writing) and blank runs are left out: they say nothing about the body's
 * edges.
 */
export function textBoxes(
  items: readonly PdfTextItem[],
  styles: Readonly<Record<string, PdfTextStyle>>,
  viewport: number[],
): TextBox[] {
  const boxes: TextBox[] = [];
  const linear = [...viewport.slice(0, 4), 0, 0];
  for (const item of items) {
    if (item.str.trim() === "" || !(item.width > 0)) continue;
    const style = styles[item.fontName];
    if (style?.vertical) continue;
    const [a, b, c, d, e, f] = item.transform;
    const along = Math.hypot(a, b);
    const size = Math.hypot(c, d);
    if (along === 0 || size === 0) continue;
    // The reading direction on the displayed page must point right (within about 18°).
    const dir = apply(linear, a / along, b / along);
    if (dir[0] < 0.95 * Math.hypot(...dir)) continue;
    const ascent = style && style.ascent > 0 && style.ascent <= 1.5 ? style.ascent : DEFAULT_ASCENT;
    const descent = style && style.descent < 0 && style.descent >= -0.8 ? style.descent : DEFAULT_DESCENT;
    const ux = a / along;
    const uy = b / along;
    const vx = c / size;
    const vy = d / size;
    const xs: number[] = [];
    const ys: number[] = [];
    for (const s of [0, item.width]) {
      for (const t of [descent * size, ascent * size]) {
        const [x, y] = apply(viewport, e + ux * s + vx * t, f + uy * s + vy * t);
        xs.push(x);
        ys.push(y);
      }
    }
    boxes.push({
      text: item.str,
      left: Math.min(...xs),
      top: Math.min(...ys),
      right: Math.max(...xs),
      bottom: Math.max(...ys),
      size: Math.hypot(...apply(linear, vx * size, vy * size)),
    });
  }
  return boxes;
}

/** Boxes whose vertical extents overlap by half the smaller one share a line. */
interface Line {
  top: number;
  bottom: number;
  left: number;
  right: number;
  /** The largest font size on the line (points). */
  size: number;
  boxes: TextBox[];
}

// Boxes come sorted by their bottom, so a box can only join one of the lines begun last.
const RECENT_LINES = 8;

function groupLines(boxes: TextBox[]): Line[] {
  const sorted = [...boxes].sort((p, q) => p.bottom - q.bottom || p.left - q.left);
  const lines: Line[] = [];
  for (const box of sorted) {
    let line: Line | undefined;
    for (let k = lines.length - 1; k >= Math.max(0, lines.length - RECENT_LINES) && !line; k--) {
      const l = lines[k];
      const overlap = Math.min(l.bottom, box.bottom) - Math.max(l.top, box.top);
      if (overlap >= 0.5 * Math.min(l.bottom - l.top, box.bottom - box.top)) line = l;
    }
    if (line) {
      line.boxes.push(box);
      line.top = Math.min(line.top, box.top);
      line.bottom = Math.max(line.bottom, box.bottom);
      line.left = Math.min(line.left, box.left);
      line.right = Math.max(line.right, box.right);
      line.size = Math.max(line.size, box.size);
    } else
      lines.push({ top: box.top, bottom: box.bottom, left: box.left, right: box.right, size: box.size, boxes: [box] });
  }
  for (const line of lines) line.boxes.sort((p, q) => p.left - q.left);
  return lines.sort((p, q) => p.top - q.top);
}

const lineText = (line: Line) => line.boxes.map((b) => b.text.trim()).join(" ");
/**
 * A line as compared across pages: page numbers change from page to page, so digits do not
 * count, and word order does not either (facing pages put the number on the outer side).
 */
const lineKey = (line: Line) => lineText(line).toLowerCase().replace(/\d+/g, "#").split(/\s+/).sort().join(" ");
const PAGE_NUMBER = /^[\s\-–—|·.([]*(?:page\s*)?(?:\d{1,4}|[ivxlc]{1,7})(?:\s*(?:of|\/)\s*\d{1,4})?[\s\-–—|·.)\]]*$/i;

// A running header or footer repeats on this share of the pages, at the same place (points).
const RUNNING_SHARE = 0.5;
const RUNNING_Y_TOLERANCE = 3;
// ... and stays in the outer fifth of the page, at least half its font size away from the body.
const RUNNING_ZONE = 0.2;
const RUNNING_GAP_EM = 0.5;

/**
 * The body lines of each page: running headers and footers taken off. In Word's model (and
 * so in a docx page setup) they sit inside the top and bottom margins, which are measured to
 * the body text. Running lines are the top (bottom) lines of a page, in its outer fifth, that
 * each repeat (digits aside) at the same height on at least half the pages (two at least) or
 * are a lone page number; they end at the widest gap in that run, which must be at least half
 * a line's font size (a line glued to the text below belongs to the body).
 */
function bodyLines(pages: PageGeometry[]): Line[][] {
  const perPage = pages.map((p) => groupLines(p.boxes));
  const inZone = (line: Line, height: number) =>
    line.bottom <= height * RUNNING_ZONE || line.top >= height * (1 - RUNNING_ZONE);
  const seen = new Map<string, number[]>();
  perPage.forEach((lines, i) => {
    for (const line of lines) {
      if (!inZone(line, pages[i].height)) continue;
      const key = `${lineKey(line)}@${Math.round(line.top / RUNNING_Y_TOLERANCE)}`;
      const at = seen.get(key) ?? [];
      if (at.at(-1) !== i) at.push(i);
      seen.set(key, at);
    }
  });
  const needed = Math.max(2, Math.ceil(pages.length * RUNNING_SHARE));
  // Tops are binned; a line on a bin edge is found by the neighbouring bin too.
  const repeats = (line: Line) =>
    [-1, 0, 1].some(
      (dy) => (seen.get(`${lineKey(line)}@${Math.round(line.top / RUNNING_Y_TOLERANCE) + dy}`)?.length ?? 0) >= needed,
    );
  return perPage.map((lines, i) => {
    const height = pages[i].height;
    // gaps[k]: the space between line k and line k + 1.
    const gaps = lines.slice(1).map((line, k) => line.top - lines[k].bottom);
    const candidate = (line: Line) => repeats(line) || PAGE_NUMBER.test(lineText(line));
    // Where a run of candidate lines meets the body: at the widest gap of the run, so that a
    // two-line header goes but the table heading under it (repeated, yet tight) stays.
    const cut = (run: number[], gapAfter: (k: number) => number) => {
      let best = -1;
      let widest = 0;
      for (const [n, k] of run.entries()) {
        const gap = gapAfter(k);
        if (gap >= RUNNING_GAP_EM * lines[k].size && gap > widest) {
          best = n;
          widest = gap;
        }
      }
      return best + 1;
    };
    const topRun: number[] = [];
    for (let k = 0; k < lines.length - 1 && lines[k].bottom <= height * RUNNING_ZONE && candidate(lines[k]); k++)
      topRun.push(k);
    const first = cut(topRun, (k) => gaps[k]);
    const bottomRun: number[] = [];
    for (let k = lines.length - 1; k > first && lines[k].top >= height * (1 - RUNNING_ZONE) && candidate(lines[k]); k--)
      bottomRun.push(k);
    const last = lines.length - cut(bottomRun, (k) => gaps[k - 1]);
    return lines.slice(first, last);
  });
}

/** The value at share `q` (0..1) of the sorted values, taking the lower one between two. */
function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) * q)];
}

// Margins are read where text reaches furthest on most pages, not on the furthest page: the
// 25th percentile of each side's gap over the pages. Text stops short of a margin far more
// often than it crosses one (a short last line, a page ending at a heading), so the low end is
// right; a quarter of the pages may still cross it (a full-bleed figure caption, a wide table).
const MARGIN_PERCENTILE = 0.25;
// A segment of a line ends at a gap wider than this many ems (table cells, columns).
const SEGMENT_GAP_EM = 1.5;
// Text "reaches" the right margin when at least this many long segments (two fifths of the
// text block's width) end within a few ems of it: wrapped prose or a full-width table row.
const WRAP_EVIDENCE = 3;
const LONG_SEGMENT_SHARE = 0.4;
const WRAP_SLACK_EM = 3;

/** Line pieces split at wide gaps: `[left, right, size]` in points. */
function segments(line: Line): [number, number, number][] {
  const out: [number, number, number][] = [];
  for (const box of line.boxes) {
    const last = out.at(-1);
    if (last && box.left - last[1] <= SEGMENT_GAP_EM * Math.max(box.size, last[2]))
      out[out.length - 1] = [last[0], Math.max(last[1], box.right), Math.max(last[2], box.size)];
    else out.push([box.left, box.right, box.size]);
  }
  return out;
}

const toInches = (points: number) => Math.max(0, Math.round((points / POINTS_PER_INCH) * 100) / 100);

/**
 * Margins in inches inferred from the body text of pages of one size, or null when no page
 * has text (a scan: nothing to measure, so nothing is invented). Left and top are the 25th
 * percentile of the pages' gaps. The right and bottom edges are only known where the text is
 * forced to stop: the right margin when long lines wrap there (see WRAP_EVIDENCE), the bottom
 * on pages that run on to a next page with their text reaching the lower half. Where the text
 * does not reach a side (a one-paragraph letter, a ragged table), that side mirrors its
 * opposite: Word's and Redline's margin presets are symmetric, and the alternative — the gap
 * to where the text happens to end — reads a short document as a 7 in margin. A bottom within
 * one line pitch of the top is taken as equal to it, since a full page ends up to a line short
 * of its margin.
 */
export function estimateMargins(pages: PageGeometry[]): PageMargins | null {
  const lines = bodyLines(pages);
  const used = pages.map((page, i) => ({ page, lines: lines[i], last: i === pages.length - 1 }));
  const withText = used.filter((p) => p.lines.length > 0);
  if (withText.length === 0) return null;
  const edges = withText.map(({ page, lines, last }) => {
    let left = Number.POSITIVE_INFINITY;
    let right = Number.NEGATIVE_INFINITY;
    for (const line of lines) {
      left = Math.min(left, line.left);
      right = Math.max(right, line.right);
    }
    // Lines are sorted by top; the lowest bottom may belong to any line (a tall one above).
    const bottom = lines.reduce((low, line) => Math.max(low, line.bottom), Number.NEGATIVE_INFINITY);
    return {
      left,
      top: lines[0].top,
      right: page.width - right,
      bottom: page.height - bottom,
      // A page that ran on to the next one and was filled at least to its middle.
      full: !last && bottom >= page.height / 2,
    };
  });
  const left = percentile(
    edges.map((e) => e.left),
    MARGIN_PERCENTILE,
  );
  const top = percentile(
    edges.map((e) => e.top),
    MARGIN_PERCENTILE,
  );

  const measuredRight = percentile(
    edges.map((e) => e.right),
    MARGIN_PERCENTILE,
  );
  let wrapped = 0;
  withText.forEach(({ page, lines }) => {
    const edge = page.width - measuredRight;
    const block = edge - left;
    for (const line of lines)
      for (const [l, r, size] of segments(line))
        if (r - l >= LONG_SEGMENT_SHARE * block && r >= edge - WRAP_SLACK_EM * size) wrapped++;
  });
  const right = wrapped >= WRAP_EVIDENCE || measuredRight < left ? measuredRight : left;

  const full = edges.filter((e) => e.full);
  const measuredBottom = percentile(
    (full.length > 0 ? full : edges).map((e) => e.bottom),
    MARGIN_PERCENTILE,
  );
  const pitch = linePitch(withText.flatMap((p) => p.lines));
  let bottom: number;
  if (measuredBottom < top) bottom = measuredBottom;
  else if (full.length === 0 || measuredBottom <= top + pitch) bottom = top;
  else bottom = measuredBottom;

  return { top: toInches(top), right: toInches(right), bottom: toInches(bottom), left: toInches(left) };
}

/** The median distance between consecutive lines' tops (points), a line's height when unknown. */
function linePitch(lines: Line[]): number {
  const steps: number[] = [];
  for (let i = 1; i < lines.length; i++) {
    const step = lines[i].top - lines[i - 1].top;
    if (step > 0 && step < 3 * lines[i].size) steps.push(step);
  }
  return steps.length > 0 ? percentile(steps, 0.5) : lines[0].size * 1.2;
}

/**
 * Page setup of a PDF from its displayed pages (points; see textBoxes). Size and orientation
 * are those most pages share (a cover or a fold-out page does not decide), named when Letter,
 * A4 or Legal; margins come from estimateMargins over the pages of that size, null when they
 * have no text. Returns null for a document without pages of positive size.
 */
export function pdfPageSetup(pages: PageGeometry[]): PageSetup | null {
  const sized = pages.filter((p) => p.width > 0 && p.height > 0);
  if (sized.length === 0) return null;
  // Sizes within a point of each other are one size (producers round differently).
  const key = (p: PageGeometry) => `${Math.round(p.width)}x${Math.round(p.height)}`;
  const counts = new Map<string, number>();
  for (const p of sized) counts.set(key(p), (counts.get(key(p)) ?? 0) + 1);
  const common = [...counts].reduce((best, c) => (c[1] > best[1] ? c : best))[0];
  const same = sized.filter((p) => key(p) === common);
  const { width, height } = same[0];
  return {
    size: paperSize(width / POINTS_PER_INCH, height / POINTS_PER_INCH),
    orientation: width > height ? "landscape" : "portrait",
    margins: estimateMargins(same),
  };
}
