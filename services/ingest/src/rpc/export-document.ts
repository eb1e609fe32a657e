import { ownerOf } from "@redline/service-kit";
import { exportForCaller, withSource } from "../commands/exports.js";
import { exportJobFromRequest } from "../mappers.js";
import type { FilesRpc } from "./call.js";

/**
 * FilesService.ExportDocument (unshown-parts.md, Export): 422 for a format outside
 * docx/pdf/html/markdown/txt/doc or bad options; 413 (rule 6) over the format cap, the element
 * bound or the time bound (cut to the deadline); 503 when PDF export has no Chromium. A
 * `source` of the caller's, of the export's format, is written back in place (issue #12).
 */
export const exportDocument: FilesRpc<"exportDocument"> = async (ctx, req, call) => {
  const caller = { ownerId: ownerOf(call), deadline: call.deadline };
  const job = await withSource(ctx, caller.ownerId, exportJobFromRequest(req), req.source, call.log);
  const started = Date.now();
  const file = await exportForCaller(ctx, caller, job);
  call.log.info({ format: job.format, bytes: file.bytes.length, ms: Date.now() - started }, "document exported");
  const { bytes: content, contentType, extension, warnings } = file;
  return { content, contentType, extension, warnings, format: job.format };
};
