// Export options JSON → the ingest ExportOptions message; changed chunks → tracked changes.
import type { documentsLibraryV1, ingestFilesV1 } from "@redline/grpc-stubs";
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
    trackChanges: o?.track_changes ?? false,
    sinceVersion: o?.since_version,
  };
}

/** The documents service's changed chunks as the export's tracked changes. */
export function toTrackedChanges(changes: documentsLibraryV1.ChunkChange[]): ingestFilesV1.TrackedChange[] {
  return changes.map((c) => ({
    chunkId: c.chunkId,
    kind: c.kind,
    baseHtml: c.baseHtml,
    afterChunkId: c.afterChunkId,
    author: c.author,
    date: c.date,
  }));
}
