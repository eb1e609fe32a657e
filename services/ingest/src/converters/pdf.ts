// PDF → HTML from pdf.js text items and drawn lines: lines in layout reading order
// (pdf-layout.ts), tables from ruling lines (pdf-tables.ts), then paragraphs, headings,
// hyphenation, aligned tables and running headers/footers (pdf-flow.ts).
import { InputError } from "@redline/service-kit";
import * as pdfjs from "pdfjs-dist/legacy/build/pdf.mjs";
import { baseTitle, type ConvertResult } from "../formats.js";
import { collapseWhitespace, escapeHtml } from "./html-util.js";
import { type FlowPage, flowToHtml, runningParts } from "./pdf-flow.js";
import { pageLines, type TextItem } from "./pdf-layout.js";
import { type PageGeometry, pdfPageSetup, textBoxes } from "./pdf-page-setup.js";
import { pageRules, ruledTables } from "./pdf-tables.js";

// Pages whose operator list (fonts, ruling lines) is read: bounds the import time of long files.
const OPERATOR_LIST_PAGES = 100;
// Font names that mark a bold face ("Calibri,Bold", "HelveticaLTStd-Blk", "NimbusRomNo9L-Medi").
const BOLD_FONT = /bold|black|heavy|demi|semib|[-,+]bd|-blk|medi(?!um)/i;

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
 * hyphens undone where the document shows the word (pdf-flow.ts). Fonts and images are not kept. Page setup: the size and orientation most
 * pages share, margins estimated from the body text (pdf-page-setup.ts; null for a scan).
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
    let info: unknown;
    try {
      doc = await task.promise;
      info = (await doc.getMetadata().catch(() => null))?.info;
      for (let n = 1; n <= doc.numPages; n++) {
        const page = await doc.getPage(n);
        // The displayed page: the visible box (CropBox within MediaBox), /Rotate and
        // /UserUnit applied, in points from its top-left corner.
        const viewport = page.getViewport({ scale: 1 });
        const { width, height } = viewport;
        const content = await page.getTextContent();
        // The operator list loads the fonts (their names tell bold faces) and holds the drawn
        // lines. It costs about as much as the text again, so long documents read it for their
        // first pages only; later pages keep headings by size and tables by alignment.
        const operators =
          n <= OPERATOR_LIST_PAGES
            ? // Annotations (form fields, stamps) are no part of the body: their drawing is skipped.
              await page.getOperatorList({ annotationMode: pdfjs.AnnotationMode.DISABLE })
            : { fnArray: [] as number[], argsArray: [] as unknown[] };
        const bold = new Map<string, boolean>();
        const isBold = (fontName: string) => {
          let known = bold.get(fontName);
          if (known === undefined) {
            const font = page.commonObjs.has(fontName)
              ? (page.commonObjs.get(fontName) as { name?: string; bold?: boolean } | null)
              : null;
            known = font?.bold === true || BOLD_FONT.test(font?.name ?? "");
            bold.set(fontName, known);
          }
          return known;
        };
        const textItems = content.items.filter((item) => "str" in item);
        // Layout reads y upwards from the bottom edge.
        const toLayout = (x: number, y: number): [number, number] => {
          const [vx, vy] = viewport.convertToViewportPoint(x, y);
          return [vx, height - vy];
        };
        const items: TextItem[] = textItems.map((item, order) => {
          const [x, y] = toLayout(item.transform[4], item.transform[5]);
          return {
            str: item.str,
            x,
            y,
            width: item.width,
            height: item.height || Math.abs(item.transform[3]) || 10,
            bold: isBold(item.fontName),
            order,
          };
        });
        const tables = ruledTables(pageRules(operators.fnArray, operators.argsArray, toLayout), items);
        pages.push({
          width,
          height,
          boxes: textBoxes(textItems, content.styles, viewport.transform),
          entries: pageLines(items, width, tables),
        });
        page.cleanup();
      }
    } catch (err) {
      throw mapPdfError(err);
    }
    const warnings = [
      "PDF text was extracted without fonts and images; paragraphs, headings and tables are rebuilt from the layout",
    ];
    const running = runningParts(pages);
    const blocks = [
      ...running.headers.map((t) => `<p data-part="header" data-variant="default">${escapeHtml(t)}</p>`),
      ...flowToHtml(running.pages),
      ...running.footers.map((t) => `<p data-part="footer" data-variant="default">${escapeHtml(t)}</p>`),
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
