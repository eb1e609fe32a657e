// FilesService.ExportDocument: map the message to an export job, run the export front door.
import type { ingestFilesV1 } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import { mediaResolver } from "../commands/media.js";
import type { FilesContext } from "../context.js";
import { exportDocument } from "../export/export-document.js";
import { exportJobFromRequest } from "../mappers.js";

const DEADLINE_MARGIN_MS = 500;

/**
 * Handler of FilesService.ExportDocument (unshown-parts.md, Export). Errors: 422 for a format
 * outside docx/pdf/html/markdown/txt/doc or bad options; 413 (rule 6) over the format cap, over
 * `limits.maxElements` elements or past `limits.exportTimeoutMs` (cut to the call's deadline);
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
    let timeoutMs = ctx.limits.exportTimeoutMs;
    // Answer the rule-6 413 before the caller's deadline turns it into a gateway timeout.
    if (call.deadline)
      timeoutMs = Math.max(1, Math.min(timeoutMs, call.deadline.getTime() - Date.now() - DEADLINE_MARGIN_MS));
    const file = await exportDocument(job, {
      maxBytes: ctx.exportMaxBytes,
      supportEmail: ctx.supportEmail,
      resolveImage: mediaResolver(ctx, principal.ownerId),
      chromiumPath: ctx.chromiumPath,
      pool: ctx.pool,
      maxElements: ctx.limits.maxElements,
      timeoutMs,
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
