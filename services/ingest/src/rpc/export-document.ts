import { ownerOf } from "@redline/service-kit";
import { exportForCaller } from "../commands/exports.js";
import { exportJobFromRequest } from "../mappers.js";
import type { FilesRpc } from "./call.js";

/**
 * FilesService.ExportDocument (unshown-parts.md, Export): 422 for a format outside
 * docx/pdf/html/markdown/txt/doc or bad options; 413 (rule 6) over the format cap, the element
 * bound or the time bound (cut to the deadline); 503 when PDF export has no Chromium.
 */
export const exportDocument: FilesRpc<"exportDocument"> = async (ctx, req, call) => {
  const caller = { ownerId: ownerOf(call), deadline: call.deadline };
  const job = exportJobFromRequest(req);
  const started = Date.now();
  const file = await exportForCaller(ctx, caller, job);
  call.log.info({ format: job.format, bytes: file.bytes.length, ms: Date.now() - started }, "document exported");
  const { bytes: content, contentType, extension, warnings } = file;
  return { content, contentType, extension, warnings, format: job.format };
};
