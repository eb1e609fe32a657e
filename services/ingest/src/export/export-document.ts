// The export front door: HTML → the requested format, images resolved first, the result
// checked against its format's cap (413 as Errors rule 6) before any byte leaves the service.
import { randomUUID } from "node:crypto";
import {
  EXPORT_MEDIA,
  type ExportedFile,
  type ExportFormat,
  type ExportJob,
  ExportTooLargeError,
  resolveLayout,
} from "./export-formats.js";
import { imageSources, rewriteImageSources } from "./parts.js";
import { htmlToDocx } from "./to-docx.js";
import { htmlPage } from "./to-html.js";
import { htmlToPdf } from "./to-pdf.js";
import { htmlToMarkdown, htmlToText } from "./to-text.js";

/** An image's bytes and type, or null when the source cannot be resolved. */
export type ImageResolver = (src: string) => Promise<{ bytes: Buffer; contentType: string } | null>;

/** What exports need from the service. */
export interface ExportDeps {
  /** Largest file per format, in bytes. */
  maxBytes: Record<ExportFormat, number>;
  supportEmail: string;
  /** Resolves `<img src>` values that are not data: URLs (stored media). */
  resolveImage: ImageResolver;
  chromiumPath?: string;
}

const MB = 1024 * 1024;
const toMb = (bytes: number) => Math.round((bytes / MB) * 100) / 100;

async function resolveImages(
  html: string,
  resolve: ImageResolver,
  warnings: string[],
): Promise<Map<string, { bytes: Buffer; contentType: string }>> {
  const found = new Map<string, { bytes: Buffer; contentType: string }>();
  let missing = 0;
  for (const src of imageSources(html)) {
    if (src.startsWith("data:")) continue;
    const image = await resolve(src).catch(() => null);
    if (image) found.set(src, image);
    else missing++;
  }
  if (missing > 0) warnings.push(`${missing} images could not be loaded and were left out`);
  return found;
}

const dataUrl = (i: { bytes: Buffer; contentType: string }) =>
  `data:${i.contentType};base64,${i.bytes.toString("base64")}`;

/**
 * Produces the file for `job` (unshown-parts.md, Export). docx via docx@9, pdf via headless
 * Chromium, html as a standalone page, markdown with GFM tables, txt in reading order.
 * Throws SchemaError (422) for bad options and ExportTooLargeError (413, rule 6) when the file
 * is over `deps.maxBytes[format]`.
 */
export async function exportDocument(job: ExportJob, deps: ExportDeps): Promise<ExportedFile> {
  const layout = resolveLayout(job.options, job.pageSetup);
  const warnings: string[] = [];
  const media = EXPORT_MEDIA[job.format];
  let bytes: Buffer;
  const common = {
    title: job.title,
    layout,
    watermarkText: job.options.watermarkText || undefined,
    watermarkOpacity: job.options.watermarkOpacity,
  };
  switch (job.format) {
    case "docx": {
      const images = await resolveImages(job.html, deps.resolveImage, warnings);
      const built = await htmlToDocx({
        ...common,
        html: job.html,
        images: new Map([...images].map(([src, i]) => [src, i.bytes])),
      });
      warnings.push(...built.warnings);
      bytes = built.bytes;
      break;
    }
    case "pdf": {
      const images = await resolveImages(job.html, deps.resolveImage, warnings);
      const html = rewriteImageSources(job.html, new Map([...images].map(([src, i]) => [src, dataUrl(i)])));
      bytes = await htmlToPdf({ ...common, html, chromiumPath: deps.chromiumPath });
      break;
    }
    case "html": {
      let html = job.html;
      if (job.options.embedImages) {
        const images = await resolveImages(job.html, deps.resolveImage, warnings);
        html = rewriteImageSources(html, new Map([...images].map(([src, i]) => [src, dataUrl(i)])));
      }
      bytes = Buffer.from(htmlPage({ ...common, html }), "utf8");
      break;
    }
    case "markdown": {
      const md = htmlToMarkdown(job.html);
      warnings.push(...md.warnings);
      if (job.options.watermarkText) warnings.push("Watermarks have no Markdown equivalent and were left out");
      bytes = Buffer.from(md.text, "utf8");
      break;
    }
    case "txt": {
      if (job.options.watermarkText) warnings.push("Watermarks have no plain-text equivalent and were left out");
      bytes = Buffer.from(htmlToText(job.html), "utf8");
      break;
    }
  }
  const max = deps.maxBytes[job.format];
  if (bytes.length > max) {
    throw new ExportTooLargeError(
      job.format,
      toMb(bytes.length),
      toMb(max),
      deps.supportEmail,
      `evt_${randomUUID().replaceAll("-", "")}`,
    );
  }
  return { bytes, contentType: media.contentType, extension: media.extension, warnings };
}
