// Exports for callers (unshown-parts.md, Export): the export front door with the caller's media
// as the image source, the format caps and the call's deadline. Stored exports (deliveries.ts)
// get STORED_FACTOR times the elements and time and no size cap.
import type { ingestFilesV1 } from "@redline/grpc-stubs";
import type { Logger } from "@redline/service-kit";
import type { IngestContext } from "../context.js";
import {
  EXPORT_FORMATS,
  type ExportedFile,
  type ExportFormat,
  type ExportJob,
  sourceFormatForExport,
} from "../export/export-formats.js";
import { exportDocument } from "./export-document.js";
import { mediaResolver } from "./media.js";
import { timeBound } from "./shared.js";
import { loadSource } from "./sources.js";

// Answer the rule-6 413 before the caller's deadline turns it into a gateway timeout.
const DEADLINE_MARGIN_MS = 500;
// Stored exports are the fallback for documents too big to send: more elements and more time.
const STORED_FACTOR = 4;
const UNCAPPED = Object.fromEntries(EXPORT_FORMATS.map((f) => [f, Number.MAX_SAFE_INTEGER])) as Record<
  ExportFormat,
  number
>;

/** Where an export runs for: the owner (whose media resolves) and the caller's deadline, if any. */
export interface ExportCaller {
  ownerId: string;
  deadline?: Date | null;
}

/**
 * The file for `job`. Errors: 422 for bad options; 413 (rule 6) over the format cap, over
 * `limits.maxElements` elements or past `limits.exportTimeoutMs` (cut to the deadline); 503
 * when PDF export has no Chromium. Images at /v1/media/{id} resolve to the owner's media.
 * `stored` (the file is stored and linked, not sent): no size cap, STORED_FACTOR times the
 * elements and time, and over those bounds a rule-5 413 / a 400 instead.
 */
export function exportForCaller(
  ctx: IngestContext,
  caller: ExportCaller,
  job: ExportJob,
  stored = false,
): Promise<ExportedFile> {
  const factor = stored ? STORED_FACTOR : 1;
  return exportDocument(job, {
    maxBytes: stored ? UNCAPPED : ctx.exportMaxBytes,
    supportEmail: ctx.supportEmail,
    resolveImage: mediaResolver(ctx, caller.ownerId),
    chromiumPath: ctx.chromiumPath,
    pool: ctx.pool,
    maxElements: ctx.limits.maxElements * factor,
    timeoutMs: timeBound(ctx.limits.exportTimeoutMs * factor, caller.deadline, DEADLINE_MARGIN_MS),
    stored,
  });
}

/**
 * `job` with its document's original (ExportJob.source) when the request names one the owner
 * has, of the export's format; else `job` as it is (generated export). Never throws for the
 * source: an unknown, foreign or unreadable original only means a generated export.
 */
export async function withSource(
  ctx: IngestContext,
  ownerId: string,
  job: ExportJob,
  source: ingestFilesV1.ExportSource | undefined,
  log?: Logger,
): Promise<ExportJob> {
  const format = sourceFormatForExport(job.format);
  const ref = source?.source;
  if (!format || !ref?.sourceId) return job;
  const loaded = await loadSource(ctx, ownerId, { ...ref, loaded: source?.loaded ?? {} }, format, log);
  return loaded ? { ...job, source: loaded } : job;
}
