import type { ingestFilesV1 as pb } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import { createUpload as create } from "../commands/uploads.js";
import type { IngestContext } from "../context.js";

/** FilesService.CreateUpload (unshown-parts.md, Uploads): 400 bad purpose, 415 extension, 413 size; a signed PUT URL. */
export const createUpload = (
  ctx: IngestContext,
  req: pb.CreateUploadRequest,
  call: CallContext,
): Promise<pb.CreateUploadResponse> => create(ctx, requirePrincipal(call).ownerId, req, call.requestId);
