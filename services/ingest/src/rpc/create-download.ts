import type { ingestFilesV1 as pb } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import { createDownload as create } from "../commands/deliveries.js";
import type { IngestContext } from "../context.js";
import { exportJobFromRequest } from "../mappers.js";

/** FilesService.CreateDownload (unshown-parts.md, Export): export now, store, sign a 15-minute link; export errors. */
export const createDownload = (
  ctx: IngestContext,
  req: pb.CreateDownloadRequest,
  call: CallContext,
): Promise<pb.CreateDownloadResponse> =>
  create(
    ctx,
    { ownerId: requirePrincipal(call).ownerId, deadline: call.deadline },
    exportJobFromRequest(req.export),
    req.filename,
  );
