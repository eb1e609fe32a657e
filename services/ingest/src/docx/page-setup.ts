// Page geometry of a docx: the body-level (last) w:sectPr of the main document part.
import type { PageMargins, PageSetup, PaperSize } from "../formats.js";

const TWIPS_PER_INCH = 1440;
// Portrait width x height in inches; A4 is 210 x 297 mm.
const NAMED_SIZES: { name: Exclude<PaperSize, object>; w: number; h: number }[] = [
  { name: "Letter", w: 8.5, h: 11 },
  { name: "A4", w: 210 / 25.4, h: 297 / 25.4 },
  { name: "Legal", w: 8.5, h: 14 },
];
// Word rounds A4 to 11906 x 16838 twips or 11907 x 16839; a twentieth of an inch covers both.
const SIZE_TOLERANCE_IN = 0.05;

const UNIT_TO_INCH: Record<string, number> = { in: 1, cm: 1 / 2.54, mm: 1 / 25.4, pt: 1 / 72, pc: 1 / 6, pi: 1 / 6 };

/**
 * A measure in inches. Transitional docx writes twips ("12240"); ISO Strict may write a
 * universal measure with a unit ("8.5in", "21cm").
 */
export function measureToInches(value: string | undefined): number | null {
  if (value === undefined) return null;
  const m = /^\s*(-?\d+(?:\.\d+)?)\s*(in|cm|mm|pt|pc|pi)?\s*$/.exec(value);
  if (!m) return null;
  const n = Number(m[1]);
  return m[2] ? n * UNIT_TO_INCH[m[2]] : n / TWIPS_PER_INCH;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/** The value of attribute `name` (any namespace prefix) in an element's start tag. */
function attr(tag: string, name: string): string | undefined {
  const m = new RegExp(`\\s(?:[\\w.-]+:)?${name}\\s*=\\s*["']([^"']*)["']`).exec(tag);
  return m?.[1];
}

/** The start tag of the first element with local name `local` inside `xml`. */
function element(xml: string, local: string): string | null {
  const m = new RegExp(`<(?:[\\w.-]+:)?${local}\\b[^>]*>`).exec(xml);
  return m ? m[0] : null;
}

/** Names a portrait width x height (inches) as Letter, A4 or Legal, else returns it as a custom size. */
export function paperSize(widthIn: number, heightIn: number): PaperSize {
  const w = Math.min(widthIn, heightIn);
  const h = Math.max(widthIn, heightIn);
  const named = NAMED_SIZES.find(
    (s) => Math.abs(s.w - w) <= SIZE_TOLERANCE_IN && Math.abs(s.h - h) <= SIZE_TOLERANCE_IN,
  );
  return named ? named.name : { width: round2(w), height: round2(h) };
}

/**
 * Page setup of the document's final section, which Word applies to the document body:
 * `w:pgSz` (w, h, orient) gives size and orientation, `w:pgMar` the margins. Sizes and
 * margins are in inches. Returns null when the part has no usable w:sectPr/w:pgSz.
 */
export function docxPageSetup(documentXml: string): PageSetup | null {
  // A tracked section change nests the old w:sectPr inside the current one; it is history.
  const xml = documentXml.includes("sectPrChange")
    ? documentXml.replace(/<(?:[\w.-]+:)?sectPrChange\b[\s\S]*?<\/(?:[\w.-]+:)?sectPrChange>/g, "")
    : documentXml;
  const opens = [...xml.matchAll(/<(?:([\w.-]+):)?sectPr\b[^>]*?(\/?)>/g)];
  const last = opens.at(-1);
  if (!last || last.index === undefined) return null;
  let sectPr: string;
  if (last[2] === "/") {
    sectPr = last[0];
  } else {
    const close = xml.indexOf(`</${last[1] ? `${last[1]}:` : ""}sectPr>`, last.index);
    sectPr = xml.slice(last.index, close < 0 ? undefined : close);
  }
  const pgSz = element(sectPr, "pgSz");
  if (!pgSz) return null;
  const width = measureToInches(attr(pgSz, "w"));
  const height = measureToInches(attr(pgSz, "h"));
  if (!width || !height || width <= 0 || height <= 0) return null;
  const orient = attr(pgSz, "orient");
  const orientation = orient === "landscape" || (orient !== "portrait" && width > height) ? "landscape" : "portrait";

  let margins: PageMargins | null = null;
  const pgMar = element(sectPr, "pgMar");
  if (pgMar) {
    // A negative top/bottom margin means "text may not push the margin"; its size is the magnitude.
    const side = (name: string) => round2(Math.abs(measureToInches(attr(pgMar, name)) ?? 0));
    margins = { top: side("top"), right: side("right"), bottom: side("bottom"), left: side("left") };
  }
  return { size: paperSize(width, height), orientation, margins };
}
