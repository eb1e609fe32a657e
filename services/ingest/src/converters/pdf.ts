// PDF → HTML from pdf.js text items and drawn lines: lines in layout reading order
// (pdf-layout.ts), tables from ruling lines (pdf-tables.ts), then paragraphs, headings,
// hyphenation, aligned tables and running headers/footers (pdf-flow.ts).
import { InputError } from "@redline/service-kit";
import { baseTitle, type ConvertResult } from "../formats.js";
import { collapseWhitespace } from "../html/util.js";
import { markedSpans, pageContent, withActualText } from "./pdf-actual-text.js";
import {
  type FlowPage,
  flowToHtml,
  MAX_BOLD_HEADING_CHARS as MAX_HEADING_LINE_CHARS,
  runningParts,
  textHtml,
} from "./pdf-flow.js";
import { type LayoutEntry, pageLines, type TextItem } from "./pdf-layout.js";
import { type PageGeometry, pdfPageSetup, textBoxes } from "./pdf-page-setup.js";
import { pageRules, ruledTables } from "./pdf-tables.js";
import { pdfjs } from "./pdfjs.js";

// Pages whose operator list (fonts, ruling lines) is read: bounds the import time of long files.
const OPERATOR_LIST_PAGES = 100;
// Font names that mark a bold face ("Calibri,Bold", "HelveticaLTStd-Blk", "NimbusRomNo9L-Medi").
const BOLD_FONT = /bold|black|heavy|demi|semib|[-,+]bd|-blk|medi(?!um)/i;
// Characters a font gave no Unicode meaning: pdf.js hands over the glyph's code instead (a
// control character, or a private-use one for symbol fonts). A marked-content span's
// /ActualText replaces them where the producer wrote one (pdf-actual-text.ts); the rest are
// left out, with a warning.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
const UNMAPPED = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ue000-\uf8ff]/gu;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
const UNMAPPED_ONE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ue000-\uf8ff]/u;
// A page with at least this many lines split into cells may hold a ruled table.
const MIN_CELL_ROWS = 2;

/** The page's layout shows rows of cells (text split at wide gaps), as a ruled table would. */
function tabular(entries: LayoutEntry[]): boolean {
  return entries.filter((e) => e.kind === "line" && e.cells.length >= 2).length >= MIN_CELL_ROWS;
}

/**
 * Some line of the page is short enough for a heading and mostly set in fonts whose weight is
 * not known yet (`unknown`, pdf.js font ids), so their names are needed. Lines are re-grouped
 * here by baseline with those items marked, as pdf-layout.ts groups them.
 */
function mayHoldBoldHeading(
  items: TextItem[],
  textItems: { fontName: string }[],
  unknown: ReadonlySet<string>,
  pageWidth: number,
): boolean {
  if (unknown.size === 0) return false;
  const marked = items.map((item, i) => ({ ...item, bold: unknown.has(textItems[i].fontName) }));
  return pageLines(marked, pageWidth).some(
    (e) =>
      e.kind === "line" &&
      e.bold &&
      e.text.length <= MAX_HEADING_LINE_CHARS &&
      (e.text.match(/\p{L}/gu)?.length ?? 0) >= 3 &&
      !/[.,;:]$/.test(e.text),
  );
}

/** Errors pdf-parse raises, by class name (its classes are not re-exported for instanceof in every build). */
function mapPdfError(err: unknown): Error {
  const name = err instanceof Error ? err.name : "";
  const message = err instanceof Error ? err.message : String(err);
  if (name === "PasswordException" || /password/i.test(message)) {
    return new InputError(
      "The .pdf file is encrypted, needs a password to open; save a copy without the password (or print it to a new PDF) and upload that",
    );
  }
  return new InputError(
    `The .pdf file is damaged or not a valid PDF (${message.slice(0, 200)}); save it again from its application and upload the new file`,
  );
}

/** A title from the PDF's metadata, unless it is a producer artefact like a file name. */
function metadataTitle(info: unknown): string | null {
  const raw = (info as { Title?: unknown } | undefined)?.Title;
  if (typeof raw !== "string") return null;
  const title = collapseWhitespace(raw);
  if (!title || /^[\w ().-]+\.(indd|docx?|pdf|rtf|txt|qxd|pages)$/i.test(title) || /^microsoft word - /i.test(title))
    return null;
  return title.slice(0, 500);
}

/**
 * Converts a PDF to HTML read in layout order: lines are rebuilt from pdf.js text positions and
 * two-column pages are read column by column (pdf-layout.ts); ruled and aligned tables become
 * tables, larger or bold lines headings, lines repeated at the top/bottom of most pages header
 * and footer parts, and paragraphs are joined across lines, columns and pages with line-end
 * hyphens undone where the document shows the word (pdf-flow.ts). Superscripts and subscripts
 * (footnote marks, exponents) become <sup>/<sub>; a glyph its font gives no Unicode takes its
 * span's /ActualText, else it is left out with a warning. Fonts and images are not kept. Page
 * setup: the size and orientation most pages share, margins estimated from the body text
 * (pdf-page-setup.ts; null for a scan).
 * Throws InputError when the file is encrypted with a user password, damaged, or not a PDF.
 */
export async function convertPdf(bytes: Buffer, filename: string): Promise<ConvertResult> {
  const magicAt = bytes.subarray(0, 1024).indexOf("%PDF-");
  if (magicAt < 0)
    throw new InputError("The .pdf file is not a PDF (no %PDF header); check that the right file was chosen");

  // A copy: pdf.js transfers/detaches the buffer it is given.
  const task = pdfjs.getDocument({ data: new Uint8Array(bytes), isEvalSupported: false, verbosity: 0 });
  let doc: Awaited<typeof task.promise> | undefined;
  try {
    const pages: (PageGeometry & FlowPage)[] = [];
    const warnings = [
      "PDF text was extracted without fonts and images; paragraphs, headings and tables are rebuilt from the layout",
    ];
    let info: unknown;
    try {
      doc = await task.promise;
      info = (await doc.getMetadata().catch(() => null))?.info;
      // Whether a font is bold, by pdf.js font id: fonts are shared by the document's pages, and
      // pdf.js hands a font's name over only once some page's operator list used it.
      const bold = new Map<string, boolean>();
      let unmapped = 0;
      // The file as text, for the pages whose /ActualText spans are read.
      let file: string | undefined;
      for (let n = 1; n <= doc.numPages; n++) {
        const page = await doc.getPage(n);
        const boldOf = (fontName: string): boolean | undefined => {
          let known = bold.get(fontName);
          if (known === undefined && page.commonObjs.has(fontName)) {
            const font = page.commonObjs.get(fontName) as { name?: string; bold?: boolean } | null;
            known = font?.bold === true || BOLD_FONT.test(font?.name ?? "");
            bold.set(fontName, known);
          }
          return known;
        };
        // The displayed page: the visible box (CropBox within MediaBox), /Rotate and
        // /UserUnit applied, in points from its top-left corner.
        const viewport = page.getViewport({ scale: 1 });
        const { width, height } = viewport;
        const content = await page.getTextContent({ includeMarkedContent: true });
        const textItems = content.items.filter((item) => "str" in item);
        // Flags and other emoji a producer described by /ActualText (pdf-actual-text.ts).
        const strs = withActualText(content.items, UNMAPPED_ONE, () => {
          file ??= bytes.toString("latin1");
          const text = pageContent(file, page.ref as { num: number; gen: number });
          return text === null ? null : markedSpans(text);
        });
        // Layout reads y upwards from the bottom edge.
        const toLayout = (x: number, y: number): [number, number] => {
          const [vx, vy] = viewport.convertToViewportPoint(x, y);
          return [vx, height - vy];
        };
        const items: TextItem[] = textItems.map((item, order) => {
          const [x, y] = toLayout(item.transform[4], item.transform[5]);
          const str = strs[order].replace(UNMAPPED, "");
          unmapped += strs[order].length - str.length;
          return {
            str,
            x,
            y,
            width: item.width,
            height: item.height || Math.abs(item.transform[3]) || 10,
            bold: boldOf(item.fontName) === true,
            order,
          };
        });
        let entries = pageLines(items, width);
        // The operator list loads the fonts (their names tell bold faces) and holds the drawn
        // lines. It costs about as much as the text again, so it is read only where it can
        // change the page: rows of cells (a ruled table may hold them), or a short line set in
        // fonts no earlier page told the weight of (it may be a bold heading). Long documents
        // read it for their first pages only.
        const unknown = new Set(textItems.map((i) => i.fontName).filter((f) => boldOf(f) === undefined));
        if (n <= OPERATOR_LIST_PAGES && (tabular(entries) || mayHoldBoldHeading(items, textItems, unknown, width))) {
          // Annotations (form fields, stamps) are no part of the body: their drawing is skipped.
          const operators = await page.getOperatorList({ annotationMode: pdfjs.AnnotationMode.DISABLE });
          textItems.forEach((item, i) => {
            items[i].bold = boldOf(item.fontName) === true;
          });
          const tables = ruledTables(pageRules(operators.fnArray, operators.argsArray, toLayout), items);
          entries = pageLines(items, width, tables);
        }
        pages.push({
          width,
          height,
          boxes: textBoxes(textItems, content.styles, viewport.transform),
          entries,
        });
        page.cleanup();
      }
      if (unmapped > 0)
        warnings.push(
          `${unmapped} character${unmapped === 1 ? "" : "s"} of the PDF had no Unicode meaning in its fonts (symbols or emoji the file does not map) and ${unmapped === 1 ? "was" : "were"} left out`,
        );
    } catch (err) {
      throw mapPdfError(err);
    }
    const running = runningParts(pages);
    const blocks = [
      ...running.headers.map((t) => `<p data-part="header" data-variant="default">${textHtml(t)}</p>`),
      ...flowToHtml(running.pages),
      ...running.footers.map((t) => `<p data-part="footer" data-variant="default">${textHtml(t)}</p>`),
    ];
    if (blocks.length === 0) {
      warnings.push(
        "No text could be extracted from the PDF; it may be scanned images (text recognition is not supported)",
      );
    }

    const pageSetup = pdfPageSetup(pages);
    return {
      html: blocks.join("\n"),
      title: metadataTitle(info) ?? baseTitle(filename),
      pageSetup,
      warnings,
      format: "pdf",
    };
  } finally {
    await task.destroy().catch(() => undefined);
  }
}
