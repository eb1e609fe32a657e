// The HTML side of a PDF export: the page Chromium prints and the header/footer templates.
// Kept apart from to-pdf.ts so the pool's workers build it without loading playwright.
import { escapeHtml } from "../html/util.js";
import { splitParts } from "./parts.js";
import { htmlPage, type PageInput } from "./to-html.js";

function partTemplate(parts: string[]): string {
  // Header/footer templates do not inherit page CSS: they need their own font size.
  const text = parts
    .map((p) =>
      escapeHtml(
        p
          .replace(/<[^>]+>/g, " ")
          .replace(/\s+/g, " ")
          .trim(),
      ),
    )
    .join(" · ");
  return `<div style="font-size:8pt;color:#444;width:100%;padding:0 0.5in;text-align:center">${text}</div>`;
}

/** A print job prepared off the main thread: the page and its header/footer templates. */
export interface PdfPage {
  page: string;
  /** Chromium's header and footer templates (empty spans when the document has none). */
  headerTemplate: string;
  footerTemplate: string;
  displayHeaderFooter: boolean;
}

/** The page Chromium prints and its header/footer templates (pure HTML work; the pool runs it). */
export function preparePdf(input: PageInput): PdfPage {
  const parts = splitParts(input.html);
  return {
    page: htmlPage({ ...input, omitHeadersFooters: true }),
    headerTemplate: parts.headers.length > 0 ? partTemplate(parts.headers) : "<span></span>",
    footerTemplate: parts.footers.length > 0 ? partTemplate(parts.footers) : "<span></span>",
    displayHeaderFooter: parts.headers.length > 0 || parts.footers.length > 0,
  };
}
