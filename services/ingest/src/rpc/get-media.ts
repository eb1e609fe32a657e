import type { ingestFilesV1 as pb } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import { getMedia as readMedia } from "../commands/media.js";
import type { IngestContext } from "../context.js";

/** FilesService.GetMedia (ARCHITECTURE, Images): the caller's image; 404 for another owner's or an unknown id. */
export const getMedia = async (
  ctx: IngestContext,
  req: pb.GetMediaRequest,
  call: CallContext,
): Promise<pb.GetMediaResponse> => {
  const media = await readMedia(ctx, requirePrincipal(call).ownerId, req.mediaId);
  return { content: media.bytes, contentType: media.contentType };
};
