// PDF → HTML paragraphs from pdf.js text items, in layout reading order (two-column pages are
// read column by column; see pdf-layout.ts). Tables are rebuilt from tab-aligned lines.
import { InputError } from "@redline/service-kit";
import * as pdfjs from "pdfjs-dist/legacy/build/pdf.mjs";
import { baseTitle, type ConvertResult } from "../formats.js";
import { collapseWhitespace, escapeHtml } from "./html-util.js";
import { pageText, type TextItem } from "./pdf-layout.js";
import { type PageGeometry, pdfPageSetup, textBoxes } from "./pdf-page-setup.js";

// A line at least this share of the page's typical long line is "full": the paragraph goes on.
// "Typical" is the 80th percentile, so one wide title or table row does not set the measure.
const FULL_LINE_SHARE = 0.75;
const TYPICAL_PERCENTILE = 0.8;
// Pages of short lines (slides, forms, lists) are not prose: every line stays its own block.
const MIN_REFLOW_LINE = 40;
const LIST_MARKER = /^(?:[•◦▪‣∙·*-]|\(?\d{1,3}[.)]|\(?[a-z][.)])\s/i;

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
 * Turns one page's extracted lines into HTML blocks: runs of tab-separated lines become a
 * table, other lines are reflowed into paragraphs (a short line ends a paragraph, a list
 * marker starts one).
 */
export function pageToHtml(pageText: string): string[] {
  const lines = pageText.split("\n").map((l) => l.replace(/\s+$/, ""));
  const lengths = lines
    .map((l) => l.trim().length)
    .filter((n) => n > 0)
    .sort((a, b) => a - b);
  const typical = lengths.length > 0 ? lengths[Math.floor((lengths.length - 1) * TYPICAL_PERCENTILE)] : 0;
  const blocks: string[] = [];
  let para: string[] = [];
  let rows: string[][] = [];
  const flushPara = () => {
    if (para.length > 0) blocks.push(`<p>${escapeHtml(para.join(""))}</p>`);
    para = [];
  };
  const flushRows = () => {
    if (rows.length >= 2) {
      const width = Math.max(...rows.map((r) => r.length));
      const body = rows
        .map(
          (r) => `<tr>${Array.from({ length: width }, (_, i) => `<td>${escapeHtml(r[i] ?? "")}</td>`).join("")}</tr>`,
        )
        .join("");
      blocks.push(`<table><tbody>${body}</tbody></table>`);
    } else if (rows.length === 1) {
      blocks.push(`<p>${escapeHtml(rows[0].join(" "))}</p>`);
    }
    rows = [];
  };
  for (const raw of lines) {
    const line = raw.trim();
    if (!line) {
      flushRows();
      flushPara();
      continue;
    }
    if (raw.includes("\t")) {
      flushPara();
      rows.push(raw.split("\t").map((c) => c.trim()));
      continue;
    }
    flushRows();
    if (para.length > 0 && LIST_MARKER.test(line)) flushPara();
    if (para.length === 0) {
      para.push(line);
    } else {
      const prev = para[para.length - 1];
      // A hyphen at a line end is usually a word split by the layout; keep it, drop the space.
      para.push(/\p{L}-$/u.test(prev) ? line : ` ${line}`);
    }
    // A colon ends a lead-in ("Here is a list:"), so what follows starts a new block.
    if (typical < MIN_REFLOW_LINE || line.length < typical * FULL_LINE_SHARE || line.endsWith(":")) flushPara();
  }
  flushRows();
  flushPara();
  return blocks;
}

/** A line as compared across pages: page numbers vary, so digits do not count. */
const lineKey = (line: string) => line.trim().replace(/\d+/g, "#");

/**
 * Running headers and footers: the first (last) line of the page text when the same line,
 * digits aside, opens (closes) at least two pages and half of them. They are taken out of every
 * page and returned once, to become out-of-flow parts; page numbers alone are dropped.
 */
export function runningParts(pageTexts: string[]): { headers: string[]; footers: string[]; pages: string[] } {
  const lines = pageTexts.map((t) => t.split("\n"));
  const edge = (which: "first" | "last") => {
    const counts = new Map<string, number>();
    for (const page of lines) {
      const real = page.filter((l) => l.trim() !== "");
      const line = which === "first" ? real[0] : real[real.length - 1];
      // A line of cells (tabs) is a repeated table header row, which belongs to its table.
      if (line && !line.includes("\t")) counts.set(lineKey(line), (counts.get(lineKey(line)) ?? 0) + 1);
    }
    const needed = Math.max(2, Math.ceil(pageTexts.length / 2));
    return new Set([...counts].filter(([, n]) => n >= needed).map(([key]) => key));
  };
  const headerKeys = edge("first");
  const footerKeys = edge("last");
  const headers = new Map<string, string>();
  const footers = new Map<string, string>();
  const pages = lines.map((page) => {
    const out = [...page];
    const take = (keys: Set<string>, found: Map<string, string>, at: () => number) => {
      const k = at();
      if (k < 0) return;
      const key = lineKey(out[k]);
      if (!keys.has(key)) return;
      // A bare page number is layout, not a footer anyone wants back.
      if (!/^[#\s\-–—/|.]*$|^page\s*#/i.test(key) && !found.has(key)) found.set(key, out[k].trim());
      out.splice(k, 1);
    };
    take(headerKeys, headers, () => out.findIndex((l) => l.trim() !== ""));
    take(footerKeys, footers, () => {
      for (let k = out.length - 1; k >= 0; k--) if (out[k].trim() !== "") return k;
      return -1;
    });
    return out.join("\n");
  });
  return { headers: [...headers.values()], footers: [...footers.values()], pages };
}

/**
 * Converts a PDF to HTML paragraphs and tab-aligned tables, read in layout order: lines are
 * rebuilt from pdf.js text positions and two-column pages are read column by column
 * (pdf-layout.ts). Fonts and images are not kept. Page setup: the size and orientation most
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
    const pages: (PageGeometry & { text: string })[] = [];
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
        const textItems = content.items.filter((item) => "str" in item);
        const items: TextItem[] = textItems.map((item) => {
          const [x, y] = viewport.convertToViewportPoint(item.transform[4], item.transform[5]);
          // Layout reads y upwards from the bottom edge.
          return {
            str: item.str,
            x,
            y: height - y,
            width: item.width,
            height: item.height || Math.abs(item.transform[3]) || 10,
          };
        });
        pages.push({
          width,
          height,
          boxes: textBoxes(textItems, content.styles, viewport.transform),
          text: pageText(items, width),
        });
        page.cleanup();
      }
    } catch (err) {
      throw mapPdfError(err);
    }
    const warnings = [
      "PDF text was extracted without fonts and images; paragraphs and tables are rebuilt from the layout",
    ];
    const running = runningParts(pages.map((p) => p.text));
    const blocks = [
      ...running.headers.map((t) => `<p data-part="header" data-variant="default">${escapeHtml(t)}</p>`),
      ...running.pages.flatMap((text) => pageToHtml(text)),
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
