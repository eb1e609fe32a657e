import type { ingestFilesV1 as pb } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import { queueEmailExport as queue } from "../commands/deliveries.js";
import type { IngestContext } from "../context.js";
import { exportJobFromRequest } from "../mappers.js";

/**
 * FilesService.QueueEmailExport (unshown-parts.md, Export): 400 malformed recipient, 422 bad
 * format, 429 with Retry-After past EMAIL_EXPORTS_PER_HOUR; queued, mailed in the background.
 */
export const queueEmailExport = (
  ctx: IngestContext,
  req: pb.QueueEmailExportRequest,
  call: CallContext,
): Promise<pb.QueueEmailExportResponse> => {
  const email = { ...req, requestedFormat: req.export?.format ?? "docx" };
  return queue(ctx, requirePrincipal(call).ownerId, email, () => exportJobFromRequest(req.export));
};
