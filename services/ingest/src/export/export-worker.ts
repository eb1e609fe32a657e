// The HTML work of an export, run in the pool's workers (never on the service's event loop):
// sanitize the source, bound its element count, list its images, then build the file (or, for
// pdf, the page Chromium prints).
import { type SanitizeOptions, sanitizeHtml } from "@redline/html-chunks";
import { TooManyElementsError } from "../formats.js";
import { countElements } from "../html/util.js";
import { currentChunks, spliceText } from "../sources/splice.js";
import type { DocumentSource } from "../sources/types.js";
import { writeDocxInPlace } from "./docx-in-place.js";
import type { PageRequest } from "./docx-package.js";
import { applyRevisionsToDocx, type TrackedChangeInput } from "./docx-revisions.js";
import type { ExportFormat, ExportLayout } from "./export-formats.js";
import { imageSources, rewriteImageSources } from "./parts.js";
import { type PdfPage, preparePdf } from "./pdf-page.js";
import { htmlToDocx } from "./to-docx.js";
import { htmlPage } from "./to-html.js";
import { htmlToMarkdown, htmlToText } from "./to-text.js";

/** First step of an export that needs images: sanitize, count, list the `<img src>` values. */
export interface ExportScanTask {
  kind: "export-scan";
  html: string;
  maxElements: number;
}

/** What the scan returns: the sanitized HTML (the build takes it as is) and its image sources. */
export interface ExportScan {
  html: string;
  images: string[];
}

/** An image's bytes and type as they cross to a worker. */
export interface TaskImage {
  bytes: Uint8Array;
  contentType: string;
}

/** The build step: the file (docx, html, markdown, txt) or the pdf's print page. */
export interface ExportBuildTask {
  kind: "export-build";
  html: string;
  /** True when `html` comes from a scan (already sanitized and counted). */
  sanitized: boolean;
  maxElements: number;
  format: ExportFormat;
  title: string;
  layout: ExportLayout;
  embedImages: boolean;
  watermarkText?: string;
  watermarkOpacity?: number;
  /** Resolved images by their `src` (sources that are not data: URLs). */
  images: [string, TaskImage][];
  /** docx with track_changes: the edits to write as Word revisions. */
  trackedChanges?: TrackedChangeInput[];
  /**
   * The document's original of this format (ExportJob.source; its bytes arrive as a
   * Uint8Array). For markdown/txt `html` is the stored chunks as sent (not scanned), so they
   * compare with their loaded HTML as they are; a scanned (docx) `html` is sanitized.
   */
  source?: DocumentSource;
  /** With `source`: the page the export asks for (docx writes what differs from the original's). */
  page?: PageRequest;
}

/** A built export: the file's bytes (own buffer, transferable), or the pdf page to print. */
export type ExportBuild =
  | { kind: "file"; bytes: Uint8Array; warnings: string[] }
  | { kind: "pdf"; page: PdfPage; warnings: string[] };

/**
 * sanitizeHtml (the stored documents' rules), then the element bound. The count is taken on the
 * sanitized HTML, where it is exact (see countElements). Throws TooManyElementsError (413).
 */
export function sanitizeCounted(html: string, maxElements: number, opts: SanitizeOptions = {}): string {
  const clean = sanitizeHtml(html, opts);
  const count = countElements(clean);
  if (count > maxElements) throw new TooManyElementsError(count, maxElements);
  return clean;
}

/** Scan step (see ExportScanTask). Throws TooManyElementsError. */
export function scanExportSource(task: ExportScanTask): ExportScan {
  const html = sanitizeCounted(task.html, task.maxElements);
  return { html, images: imageSources(html) };
}

/**
 * The docx written into the document's original package (docx-in-place.ts), or null when that
 * package cannot be read (a warning says so; the caller builds the docx from HTML instead).
 */
async function docxInPlace(html: string, task: ExportBuildTask, warnings: string[]): Promise<Buffer | null> {
  const source = task.source as DocumentSource;
  try {
    const images = new Map(task.images);
    const written = await writeDocxInPlace(
      html,
      { ...source, bytes: Buffer.from(source.bytes) },
      {
        images: (src) => {
          const image = images.get(src);
          if (image) return Buffer.from(image.bytes);
          const data = /^data:image\/[\w.+-]+;base64,/i.exec(src);
          return data ? Buffer.from(src.slice(data[0].length), "base64") : undefined;
        },
        page: task.page,
        ...(task.watermarkText && {
          watermark: { text: task.watermarkText, opacity: task.watermarkOpacity ?? 0.3 },
        }),
      },
    );
    warnings.push(...written.warnings);
    if (!task.trackedChanges) return written.bytes;
    // Tracked changes on the original's own blocks: the writer reports where each chunk went.
    const revised = await applyRevisionsToDocx(written.bytes, written.map, task.trackedChanges);
    if (revised.skipped.length > 0)
      warnings.push(
        `${revised.skipped.length} tracked changes could not be placed (the current text stands there without revision marks)`,
      );
    return revised.bytes;
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    warnings.push(
      `The original Word file could not be written back in place (${reason.slice(0, 120)}); it was rebuilt from the text`,
    );
    return null;
  }
}

const dataUrl = (i: TaskImage) => `data:${i.contentType};base64,${Buffer.from(i.bytes).toString("base64")}`;

/** Build step (see ExportBuildTask). Throws TooManyElementsError when the source was not scanned. */
export async function buildExport(task: ExportBuildTask): Promise<ExportBuild> {
  const html = task.sanitized ? task.html : sanitizeCounted(task.html, task.maxElements);
  const images = new Map(task.images);
  const inlined = () => rewriteImageSources(html, new Map([...images].map(([src, i]) => [src, dataUrl(i)])));
  const common = {
    title: task.title,
    layout: task.layout,
    watermarkText: task.watermarkText || undefined,
    watermarkOpacity: task.watermarkOpacity,
  };
  const warnings: string[] = [];
  let bytes: Buffer;
  switch (task.format) {
    case "docx": {
      const inPlace = task.source?.format === "docx" ? await docxInPlace(html, task, warnings) : null;
      if (inPlace) {
        bytes = inPlace;
        break;
      }
      const built = await htmlToDocx({
        ...common,
        html,
        images: new Map([...images].map(([src, i]) => [src, Buffer.from(i.bytes)])),
        trackedChanges: task.trackedChanges,
      });
      warnings.push(...built.warnings);
      bytes = built.bytes;
      break;
    }
    case "pdf":
      return { kind: "pdf", page: preparePdf({ ...common, html: inlined() }), warnings };
    case "html":
      bytes = Buffer.from(htmlPage({ ...common, html: task.embedImages ? inlined() : html }), "utf8");
      break;
    case "markdown": {
      const spliced = task.source && inPlace(task.html, task.source, (h) => htmlToMarkdown(h).text, warnings);
      if (spliced) {
        bytes = spliced;
        break;
      }
      const md = htmlToMarkdown(html);
      warnings.push(...md.warnings);
      if (task.watermarkText) warnings.push("Watermarks have no Markdown equivalent and were left out");
      bytes = Buffer.from(md.text, "utf8");
      break;
    }
    case "txt": {
      if (task.watermarkText) warnings.push("Watermarks have no plain-text equivalent and were left out");
      const spliced = task.source && inPlace(task.html, task.source, htmlToText, warnings);
      bytes = spliced || Buffer.from(htmlToText(html), "utf8");
      break;
    }
  }
  // A plain view: Buffers arrive as Uint8Array over IPC anyway, and this avoids copying.
  return { kind: "file", bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), warnings };
}

/**
 * Markdown/text written into the original (spliceText): untouched chunks as their bytes, others
 * rendered from their sanitized HTML. Null when the original places no chunk of the document.
 */
function inPlace(
  html: string,
  source: DocumentSource,
  render: (html: string) => string,
  warnings: string[],
): Buffer | null {
  const bytes = Buffer.from(source.bytes.buffer, source.bytes.byteOffset, source.bytes.byteLength);
  return spliceText(currentChunks(html), { ...source, bytes }, (h) => render(sanitizeHtml(h)), warnings);
}
