import type { ingestFilesV1 as pb } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import { convertUpload as convert } from "../commands/uploads.js";
import type { IngestContext } from "../context.js";
import { convertedToMessage } from "../mappers.js";

/** FilesService.ConvertUpload (unshown-parts.md, Uploads): the upload converted; 404 unknown/expired, 413 too big. */
export const convertUpload = async (
  ctx: IngestContext,
  req: pb.ConvertUploadRequest,
  call: CallContext,
): Promise<pb.ConvertUploadResponse> => {
  const done = await convert(ctx, requirePrincipal(call).ownerId, req.uploadId, call.requestId);
  return { converted: convertedToMessage(done.converted), filename: done.filename, purpose: done.purpose };
};
