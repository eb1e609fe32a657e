// FilesService.ExportDocument: map the message to an export job, run the export front door.
import type { ingestFilesV1 } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import { exportDocument } from "../export/export-document.js";
import { exportJobFromRequest } from "../files/export-request.js";
import type { FilesContext } from "../files/files-context.js";
import { mediaResolver } from "../files/media.js";

/**
 * Handler of FilesService.ExportDocument (unshown-parts.md, Export). Errors: 422 for a format
 * outside docx/pdf/html/markdown/txt/doc or bad options; 413 (rule 6) over the format cap;
 * 503 when PDF export has no Chromium. Images at /v1/media/{id} resolve to the caller's media.
 */
export function exportDocumentHandler(ctx: FilesContext) {
  return async (
    req: ingestFilesV1.ExportDocumentRequest,
    call: CallContext,
  ): Promise<ingestFilesV1.ExportDocumentResponse> => {
    const principal = requirePrincipal(call);
    const job = exportJobFromRequest(req);
    const started = Date.now();
    const file = await exportDocument(job, {
      maxBytes: ctx.exportMaxBytes,
      supportEmail: ctx.supportEmail,
      resolveImage: mediaResolver(ctx, principal.ownerId),
      chromiumPath: ctx.chromiumPath,
    });
    call.log.info({ format: job.format, bytes: file.bytes.length, ms: Date.now() - started }, "document exported");
    return {
      content: file.bytes,
      contentType: file.contentType,
      extension: file.extension,
      warnings: file.warnings,
      format: job.format,
    };
  };
}
