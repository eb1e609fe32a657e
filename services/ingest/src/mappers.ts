// ExportDocumentRequest → ExportJob, shared by direct exports and deliveries.
import type { ingestFilesV1 } from "@redline/grpc-stubs";
import { InputError } from "@redline/service-kit";
import { type ExportJob, normalizeExportFormat } from "./export/export-formats.js";
import type { PageSetup } from "./formats.js";

function parsePageSetup(json: string): PageSetup | null {
  if (!json) return null;
  try {
    return JSON.parse(json) as PageSetup;
  } catch {
    throw new InputError("page_setup_json is not valid JSON");
  }
}

/** The job for a request: format normalized (doc → docx; others 422), empty option fields unset. */
export function exportJobFromRequest(req: ingestFilesV1.ExportDocumentRequest): ExportJob {
  const o = req.options;
  return {
    html: req.html,
    format: normalizeExportFormat(req.format),
    title: req.title || "Document",
    pageSetup: parsePageSetup(req.pageSetupJson),
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
