// Proto messages ↔ the commands' plain values: rows and results to messages, export requests to jobs.
import { type commonV1, type ingestFilesV1, type ingestV1, NullValue } from "@redline/grpc-stubs";
import type { AttachmentJobView } from "./commands/attachment-jobs.js";
import type { StoredSource } from "./commands/sources.js";
import type { AttachmentRow, TemplateRow } from "./db/tables.js";
import { type ExportJob, marginPreset, normalizeExportFormat } from "./export/export-formats.js";
import { type ConvertResult, FORMATS_WITH_PARTS, type PageSetup, type PaperSize } from "./formats.js";

const PAPER_NAMES = ["Letter", "A4", "Legal"] as const;

/** A reader's page setup (docx/pdf) as the proto PageSetup; undefined when the file gave none. */
export function pageSetupToProto(p: PageSetup | null): commonV1.PageSetup | undefined {
  if (!p) return undefined;
  return {
    ...(typeof p.size === "string" ? { sizeName: p.size } : { sizeInches: p.size }),
    orientation: p.orientation,
    ...(p.margins ? { marginsInches: p.margins } : { marginsNull: NullValue.NULL_VALUE }),
  };
}

/**
 * An export request's PageSetup as the layout's input (null when none). Parts the layout cannot
 * use fall back as they always did: an unknown or missing paper name is Letter, an orientation
 * other than "landscape" is portrait, missing or null margins are the normal preset; a named
 * margin preset (normal, narrow, moderate, wide) gives its inches.
 */
export function pageSetupFromProto(p: commonV1.PageSetup | undefined): PageSetup | null {
  if (!p) return null;
  const name = p.sizeName?.toLowerCase();
  const size: PaperSize = p.sizeInches ?? PAPER_NAMES.find((k) => k.toLowerCase() === name) ?? "Letter";
  const margins = p.marginsInches ?? (p.marginsName !== undefined ? marginPreset(p.marginsName) : undefined);
  return { size, orientation: p.orientation === "landscape" ? "landscape" : "portrait", margins: margins ?? null };
}

/**
 * The job for a request: format normalized (doc → docx; others SchemaError 422), empty option
 * fields unset; a missing request is an empty docx export.
 */
export function exportJobFromRequest(req: ingestFilesV1.ExportDocumentRequest | undefined): ExportJob {
  const o = req?.options;
  return {
    html: req?.html ?? "",
    format: normalizeExportFormat(req?.format ?? "docx"),
    title: req?.title || "Document",
    pageSetup: pageSetupFromProto(req?.pageSetup),
    options: {
      paperSize: o?.paperSize || undefined,
      orientation: o?.orientation || undefined,
      margins: o?.margins || undefined,
      customMarginsInches: o?.customMarginsInches,
      embedImages: o?.embedImages ?? false,
      watermarkText: o?.watermarkText || undefined,
      watermarkOpacity: o?.watermarkOpacity,
      trackChanges: o?.trackChanges ?? false,
      sinceVersion: o?.sinceVersion,
    },
    trackedChanges: (req?.trackedChanges?.changes ?? []).map((c) => ({
      chunkId: c.chunkId,
      kind: c.kind === "inserted" || c.kind === "deleted" ? c.kind : "modified",
      baseHtml: c.baseHtml,
      afterChunkId: c.afterChunkId,
      author: c.author,
      date: c.date ?? new Date(0),
    })),
  };
}

/** A conversion's result as IngestService returns it (page setup and source absent when none). */
export function convertedToMessage(
  result: ConvertResult & { stored?: StoredSource },
): ingestV1.ConvertDocumentResponse {
  return {
    ...(result.stored && { source: { sourceId: result.stored.sourceId, format: result.stored.format } }),
    html: result.html,
    title: result.title,
    pageSetup: pageSetupToProto(result.pageSetup),
    warnings: result.warnings,
    format: result.format,
    partsFromFile: FORMATS_WITH_PARTS.has(result.format),
  };
}

/** The message form of an attachment row. */
export function attachmentToMessage(row: AttachmentRow): ingestFilesV1.Attachment {
  return {
    attachmentId: row.id,
    sessionId: row.session_id,
    filename: row.filename,
    contentType: row.content_type,
    sizeBytes: Number(row.size_bytes),
    status: row.status,
    textLength: row.text_length,
    chunkCount: row.chunk_count,
    error: row.error,
    kind: row.kind,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The message form of an attachment job: the attachment and its job status. */
export function attachmentJobToMessage(job: AttachmentJobView): ingestFilesV1.AttachmentJob {
  return { attachment: attachmentToMessage(job.row), status: job.status };
}

/** The message form of a template row (without its HTML). */
export function templateToMessage(row: TemplateRow): ingestFilesV1.Template {
  return {
    templateId: row.id,
    name: row.name,
    filename: row.filename,
    title: row.title,
    format: row.format,
    createdAt: row.created_at,
    htmlBytes: Buffer.byteLength(row.html, "utf8"),
    organizationScoped: row.organization_id !== "",
  };
}
