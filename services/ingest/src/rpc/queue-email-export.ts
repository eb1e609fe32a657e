import { ownerOf } from "@redline/service-kit";
import { queueEmailExport as queue } from "../commands/deliveries.js";
import { exportJobFromRequest } from "../mappers.js";
import type { FilesRpc } from "./call.js";

/**
 * FilesService.QueueEmailExport (unshown-parts.md, Export): to recipient_email, or when empty to
 * the caller's email on file (billing); 400 malformed recipient or none on file, 422 bad format,
 * 429 with Retry-After past EMAIL_EXPORTS_PER_HOUR; queued, mailed in the background.
 */
export const queueEmailExport: FilesRpc<"queueEmailExport"> = (ctx, req, call) => {
  const email = { ...req, requestedFormat: req.export?.format ?? "docx" };
  const caller = { ownerId: ownerOf(call), fwd: call.forward() };
  return queue(ctx, caller, email, () => exportJobFromRequest(req.export), req.export?.source);
};
