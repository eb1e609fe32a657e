// Proto messages ↔ the commands' plain values: rows and results to messages, export requests to jobs.
import type { ingestFilesV1, ingestV1 } from "@redline/grpc-stubs";
import { InputError } from "@redline/service-kit";
import type { AttachmentRow, TemplateRow } from "./db/tables.js";
import { type ExportJob, normalizeExportFormat } from "./export/export-formats.js";
import { type ConvertResult, FORMATS_WITH_PARTS, type PageSetup } from "./formats.js";

function parsePageSetup(json: string): PageSetup | null {
  if (!json) return null;
  try {
    return JSON.parse(json) as PageSetup;
  } catch {
    throw new InputError("page_setup_json is not valid JSON");
  }
}

/**
 * The job for a request: format normalized (doc → docx; others SchemaError 422), empty option
 * fields unset; a missing request is an empty docx export. InputError (400) for bad page_setup_json.
 */
export function exportJobFromRequest(req: ingestFilesV1.ExportDocumentRequest | undefined): ExportJob {
  const o = req?.options;
  return {
    html: req?.html ?? "",
    format: normalizeExportFormat(req?.format ?? "docx"),
    title: req?.title || "Document",
    pageSetup: parsePageSetup(req?.pageSetupJson ?? ""),
    options: {
      paperSize: o?.paperSize || undefined,
      orientation: o?.orientation || undefined,
      margins: o?.margins || undefined,
      customMarginsInches: o?.customMarginsInches,
      embedImages: o?.embedImages ?? false,
      watermarkText: o?.watermarkText || undefined,
      watermarkOpacity: o?.watermarkOpacity,
    },
  };
}

/** A conversion's result as IngestService returns it (page setup as JSON, "" when none). */
export function convertedToMessage(result: ConvertResult): ingestV1.ConvertDocumentResponse {
  return {
    html: result.html,
    title: result.title,
    pageSetupJson: result.pageSetup ? JSON.stringify(result.pageSetup) : "",
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
