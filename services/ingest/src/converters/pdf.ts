// PDF → HTML paragraphs from pdf.js text extraction (pdf-parse). Minimal by design: reading
// order is pdf.js's, multi-column layout and real table detection are a later issue.
import { InputError } from "@redline/service-kit";
import { PDFParse } from "pdf-parse";
import { baseTitle, type ConvertResult, type PageSetup } from "../formats.js";
import { paperSize } from "./docx-page-setup.js";
import { collapseWhitespace, escapeHtml } from "./html-util.js";

const POINTS_PER_INCH = 72;
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

/**
 * Converts a PDF to HTML paragraphs (text only: fonts, images and layout are not kept).
 * Page setup: size and orientation of page 1, margins null. Throws InputError when the
 * file is encrypted with a user password, damaged, or not a PDF.
 */
export async function convertPdf(bytes: Buffer, filename: string): Promise<ConvertResult> {
  const magicAt = bytes.subarray(0, 1024).indexOf("%PDF-");
  if (magicAt < 0)
    throw new InputError("The .pdf file is not a PDF (no %PDF header); check that the right file was chosen");

  // A copy: pdf.js transfers/detaches the buffer it is given.
  const parser = new PDFParse({ data: new Uint8Array(bytes), isEvalSupported: false, verbosity: 0 });
  try {
    let info: Awaited<ReturnType<PDFParse["getInfo"]>>;
    let text: Awaited<ReturnType<PDFParse["getText"]>>;
    try {
      info = await parser.getInfo({ parsePageInfo: true, partial: [1] });
      text = await parser.getText({ pageJoiner: "" });
    } catch (err) {
      throw mapPdfError(err);
    }
    const warnings = ["PDF text was extracted without its layout: fonts, images, columns and most tables are not kept"];
    const blocks = text.pages.flatMap((page) => pageToHtml(page.text));
    if (blocks.length === 0) {
      warnings.push(
        "No text could be extracted from the PDF; it may be scanned images (text recognition is not supported)",
      );
    }

    let pageSetup: PageSetup | null = null;
    const first = info.pages[0];
    if (first && first.width > 0 && first.height > 0) {
      const w = first.width / POINTS_PER_INCH;
      const h = first.height / POINTS_PER_INCH;
      pageSetup = { size: paperSize(w, h), orientation: w > h ? "landscape" : "portrait", margins: null };
    }
    return {
      html: blocks.join("\n"),
      title: metadataTitle(info.info) ?? baseTitle(filename),
      pageSetup,
      warnings,
      format: "pdf",
    };
  } finally {
    await parser.destroy().catch(() => undefined);
  }
}
