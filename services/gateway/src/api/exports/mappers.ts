// Export options JSON → the ingest ExportOptions message.
import type { ingestFilesV1 } from "@redline/grpc-stubs";
import type { ExportOptionsJson } from "./schemas.js";

/** Export options as the FilesService message. */
export function toExportOptions(o: ExportOptionsJson | undefined): ingestFilesV1.ExportOptions {
  return {
    paperSize: o?.paper_size ?? "",
    orientation: o?.orientation ?? "",
    margins: o?.margins ?? "",
    customMarginsInches: o?.custom_margins_inches,
    embedImages: o?.embed_images ?? false,
    watermarkText: o?.watermark_text ?? "",
    watermarkOpacity: o?.watermark_opacity,
  };
}
