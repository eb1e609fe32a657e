// The export front door: HTML → the requested format. The HTML work (sanitize, element bound,
// parsing, building the file) runs in the converter pool under a time bound; this thread only
// resolves images, drives Chromium for pdf and checks the result against its format's cap (413
// as Errors rule 6) before any byte leaves the service.
import { randomUUID } from "node:crypto";
import { InputError } from "@redline/service-kit";
import { defaultConverterPool } from "../convert.js";
import type { PageRequest } from "../export/docx-package.js";
import {
  checkTrackChanges,
  EXPORT_MEDIA,
  type ExportedFile,
  type ExportFormat,
  type ExportJob,
  type ExportLayout,
  type ExportOptions,
  ExportTooLargeError,
  resolveLayout,
  sourceFormatForExport,
} from "../export/export-formats.js";
import type { ExportBuild, ExportBuildTask, ExportScan, TaskImage } from "../export/export-worker.js";
import { printPdf } from "../export/to-pdf.js";
import { DEFAULT_LIMITS, type PageSetup, TooManyElementsError } from "../formats.js";
import { timeExport } from "../ingest-metrics.js";
import { type ConverterPool, seconds } from "../sandbox/pool.js";

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
  /** Where the HTML work runs (default: the process-wide pool). */
  pool?: ConverterPool;
  /** Most elements the source may have (default DEFAULT_LIMITS.maxElements). */
  maxElements?: number;
  /** Time bound of the HTML work in ms, from when a worker takes it (default DEFAULT_LIMITS.exportTimeoutMs). */
  timeoutMs?: number;
  /**
   * True when the file is stored and linked (downloads, email) rather than sent: over the
   * element or time bound is then a rule-5 413 / a 400, not rule 6 (whose remedy is the email).
   */
  stored?: boolean;
}

const MB = 1024 * 1024;
const toMb = (bytes: number) => Math.round((bytes / MB) * 100) / 100;
const eventId = () => `evt_${randomUUID().replaceAll("-", "")}`;

async function resolveImages(
  sources: string[],
  resolve: ImageResolver,
  warnings: string[],
): Promise<[string, TaskImage][]> {
  const found: [string, TaskImage][] = [];
  let missing = 0;
  for (const src of sources) {
    if (src.startsWith("data:")) continue;
    const image = await resolve(src).catch(() => null);
    if (image) found.push([src, { bytes: image.bytes, contentType: image.contentType }]);
    else missing++;
  }
  if (missing > 0) warnings.push(`${missing} images could not be loaded and were left out`);
  return found;
}

/**
 * Produces the file for `job` (unshown-parts.md, Export). docx via docx@9, pdf via headless
 * Chromium, html as a standalone page, markdown with GFM tables, txt in reading order. The
 * source is sanitized first (the stored documents' rules), whatever it came from.
 * Throws SchemaError (422) for bad options; ExportTooLargeError (413, rule 6) when the file is
 * over `deps.maxBytes[format]`, the source has more than `maxElements` elements or the build
 * outlasts `timeoutMs`; with `deps.stored` the last two are a rule-5 413 and a 400 instead.
 */
export function exportDocument(job: ExportJob, deps: ExportDeps): Promise<ExportedFile> {
  return timeExport(job.format, () => buildExport(job, deps));
}

/**
 * The page an export asks for, field by field: what its options name (as resolved into
 * `layout`), else the document's own page setup; absent where neither says anything.
 */
function askedPage(options: ExportOptions, pageSetup: PageSetup | null, layout: ExportLayout): PageRequest {
  const page: PageRequest = {};
  if (options.paperSize) page.size = layout.paperName ?? { width: layout.widthIn, height: layout.heightIn };
  else if (pageSetup?.size) page.size = pageSetup.size;
  if (options.orientation) page.orientation = layout.orientation;
  else if (pageSetup?.orientation) page.orientation = pageSetup.orientation;
  if (options.margins || options.customMarginsInches) page.margins = layout.margins;
  else if (pageSetup?.margins) page.margins = pageSetup.margins;
  return page;
}

async function buildExport(job: ExportJob, deps: ExportDeps): Promise<ExportedFile> {
  checkTrackChanges(job.format, job.options);
  const layout = resolveLayout(job.options, job.pageSetup);
  const pool = deps.pool ?? defaultConverterPool();
  const maxElements = deps.maxElements ?? DEFAULT_LIMITS.maxElements;
  const timeoutMs = deps.timeoutMs ?? DEFAULT_LIMITS.exportTimeoutMs;
  let deadline: number | undefined;
  const sourceBytes = Buffer.byteLength(job.html, "utf8");
  const fail = (err: unknown): never => {
    throw refusal(err, job.format, sourceBytes, timeoutMs, deps);
  };
  // One time bound for the whole export, counted from when a worker first takes it (not while
  // queued): each step gets what the earlier ones left.
  const bounds = {
    get timeoutMs() {
      deadline ??= Date.now() + timeoutMs;
      return Math.max(1, deadline - Date.now());
    },
    onTimeout: () => new ExportTimeoutError(timeoutMs),
    onOutOfMemory: (mb: number) => new ExportTimeoutError(timeoutMs, mb),
  };
  const warnings: string[] = [];
  const needsImages =
    job.format === "docx" || job.format === "pdf" || (job.format === "html" && job.options.embedImages);
  let html = job.html;
  let images: [string, TaskImage][] = [];
  if (needsImages) {
    const scan = await pool.runTask<ExportScan>({ kind: "export-scan", html, maxElements }, bounds).catch(fail);
    html = scan.html;
    images = await resolveImages(scan.images, deps.resolveImage, warnings);
  }
  const task: ExportBuildTask = {
    kind: "export-build",
    html,
    sanitized: needsImages === true,
    maxElements,
    format: job.format,
    title: job.title,
    layout,
    embedImages: job.options.embedImages ?? false,
    watermarkText: job.options.watermarkText || undefined,
    watermarkOpacity: job.options.watermarkOpacity,
    images,
    trackedChanges: job.format === "docx" && job.options.trackChanges ? (job.trackedChanges ?? []) : undefined,
    // Only the format it was loaded as is written back in place (a .md exported as docx is generated).
    ...(job.source &&
      job.source.format === sourceFormatForExport(job.format) && {
        source: job.source,
        page: askedPage(job.options, job.pageSetup, layout),
      }),
  };
  const built = await pool.runTask<ExportBuild>(task, bounds).catch(fail);
  warnings.push(...built.warnings);
  const bytes =
    built.kind === "pdf"
      ? await print(built.page, layout, deps, deadline ?? Date.now() + timeoutMs).catch(fail)
      : Buffer.from(built.bytes);
  const max = deps.maxBytes[job.format];
  if (bytes.length > max)
    throw new ExportTooLargeError(job.format, toMb(bytes.length), toMb(max), deps.supportEmail, eventId());
  const media = EXPORT_MEDIA[job.format];
  return { bytes, contentType: media.contentType, extension: media.extension, warnings };
}

/** Chromium prints in its own process; a print still running at the deadline is abandoned. */
async function print(
  page: Extract<ExportBuild, { kind: "pdf" }>["page"],
  layout: ExportLayout,
  deps: ExportDeps,
  deadline: number,
): Promise<Buffer> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new ExportTimeoutError(deps.timeoutMs ?? DEFAULT_LIMITS.exportTimeoutMs)),
      Math.max(1, deadline - Date.now()),
    );
  });
  try {
    return await Promise.race([printPdf(page, layout, deps.chromiumPath), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** An export's HTML work ran past its time bound (or out of memory). */
class ExportTimeoutError extends Error {
  constructor(
    readonly timeoutMs: number,
    readonly memoryMb?: number,
  ) {
    super(memoryMb ? `export needed more than ${memoryMb} MB` : `export took longer than ${timeoutMs} ms`);
  }
}

/** Maps the pool's refusals to the caller's shapes; other errors pass through. */
function refusal(
  err: unknown,
  format: ExportFormat,
  sourceBytes: number,
  timeoutMs: number,
  deps: ExportDeps,
): unknown {
  const max = deps.maxBytes[format];
  const isTimeout = err instanceof ExportTimeoutError || (err instanceof Error && err.name === "TimeoutError");
  if (err instanceof TooManyElementsError) {
    if (deps.stored) return err.asRequestTooLarge(sourceBytes, max, deps.supportEmail, eventId());
    return new ExportTooLargeError(format, toMb(sourceBytes), toMb(max), deps.supportEmail, eventId(), {
      elementCount: err.elementCount,
      maxElements: err.maxElements,
    });
  }
  if (err instanceof ExportTimeoutError && err.memoryMb) {
    if (deps.stored)
      return new InputError(`The ${format} export needs more than ${err.memoryMb} MB of memory; split the document`);
    return new ExportTooLargeError(format, toMb(sourceBytes), toMb(max), deps.supportEmail, eventId(), {
      memoryMb: err.memoryMb,
    });
  }
  if (isTimeout) {
    if (deps.stored)
      return new InputError(
        `The ${format} export took longer than ${seconds(timeoutMs)} s to build; split the document and export the parts`,
      );
    return new ExportTooLargeError(format, toMb(sourceBytes), toMb(max), deps.supportEmail, eventId(), {
      timeoutSeconds: seconds(timeoutMs),
    });
  }
  return err;
}
