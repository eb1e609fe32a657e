// Hidden text of a .docx (runs with w:vanish, directly or from their character style), which
// mammoth reads as ordinary text. It is kept, not shown: `<span data-hidden="true" hidden>`,
// which the sanitizer lets through only in that form, the txt/markdown exports leave out, a
// browser does not show and the docx export writes back as hidden text (export/hidden-text.ts).
// Mammoth cannot be told about w:vanish, so the main part is rewritten before it reads it: the
// text of each hidden run is fenced by two noncharacters (never in real text), which the HTML
// then turns into the span.
import type { CheckedZip } from "./zip-guard.js";

/** The mark of hidden text in the HTML of a document. */
export const HIDDEN_SPAN_OPEN = '<span data-hidden="true" hidden="">';

// U+FDD0 and U+FDD1 are noncharacters: no document means them, so they cannot be forged by text.
const OPEN = "\uFDD0";
const CLOSE = "\uFDD1";

const VANISH_ON = /<w:vanish\b(?![^>]*\bw:val="(?:false|0|off)")[^>]*\/>/;

/** True when run properties (a w:rPr's content) hide the run with w:vanish. */
export function isHiddenRun(rPr: string): boolean {
  return VANISH_ON.test(rPr);
}

/** Ids of the character styles that hide their text (w:vanish in the style's run properties). */
export function hiddenCharacterStyles(stylesXml: string | undefined): Set<string> {
  const out = new Set<string>();
  for (const style of stylesXml?.match(/<w:style\b[^>]*w:type="character"[^>]*>[\s\S]*?<\/w:style>/g) ?? []) {
    const id = /w:styleId="([^"]*)"/.exec(style)?.[1];
    const rPr = /<w:rPr>([\s\S]*?)<\/w:rPr>/.exec(style)?.[1] ?? "";
    if (id && VANISH_ON.test(rPr)) out.add(id);
  }
  return out;
}

/**
 * The part's XML with the text of every hidden run fenced for `hiddenSpans`; null when no run
 * is hidden. A run is hidden by w:vanish in its own properties or by a style of `hiddenStyles`.
 */
export function fenceHiddenRuns(xml: string, hiddenStyles: ReadonlySet<string>): string | null {
  if (!VANISH_ON.test(xml) && hiddenStyles.size === 0) return null;
  let found = false;
  const fenced = xml.replace(/<w:r\b[^>]*>\s*<w:rPr>([\s\S]*?)<\/w:rPr>[\s\S]*?<\/w:r>/g, (run, rPr: string) => {
    const style = /<w:rStyle\s+w:val="([^"]*)"/.exec(rPr)?.[1];
    if (!VANISH_ON.test(rPr) && !(style && hiddenStyles.has(style))) return run;
    found = true;
    return run.replace(/(<w:t\b[^>]*>)([\s\S]*?)(<\/w:t>)/g, `$1${OPEN}$2${CLOSE}$3`);
  });
  return found ? fenced : null;
}

/**
 * The main part `xml` (of the package checked as `zip`) with the text of its hidden runs fenced
 * for mammoth; null when nothing is hidden. Pass mammoth's HTML of it through `hiddenSpans`.
 */
export function fenceHiddenXml(zip: CheckedZip, xml: string): string | null {
  const styles = hiddenCharacterStyles(zip.read("word/styles.xml")?.toString("utf8"));
  return fenceHiddenRuns(stripFences(xml), styles);
}

/**
 * Mammoth's HTML with each fenced hidden text as `<span data-hidden="true" hidden="">`; stray
 * fences (a hidden run split by markup mammoth adds) are dropped.
 */
export function hiddenSpans(html: string): string {
  if (!html.includes(OPEN)) return html;
  return html
    .replaceAll(CLOSE + OPEN, "")
    .replace(/\uFDD0([^\uFDD0\uFDD1<]*)\uFDD1/g, (_, text: string) => (text ? `${HIDDEN_SPAN_OPEN}${text}</span>` : ""))
    .replace(/[\uFDD0\uFDD1]/g, "");
}

/** Removes the fence characters from XML text a document brought itself (they would forge marks). */
function stripFences(xml: string): string {
  return xml.includes(OPEN) || xml.includes(CLOSE) ? xml.replace(/[\uFDD0\uFDD1]/g, "") : xml;
}
