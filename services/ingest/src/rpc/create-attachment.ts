import type { ingestFilesV1 as pb } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import { createAttachment as create } from "../commands/attachments.js";
import type { IngestContext } from "../context.js";
import { attachmentToMessage } from "../mappers.js";

/** FilesService.CreateAttachment (unshown-parts.md, Attachments): 415 extension, 413 over 50 MB, 400 empty; pending. */
export const createAttachment = async (
  ctx: IngestContext,
  req: pb.CreateAttachmentRequest,
  call: CallContext,
): Promise<pb.CreateAttachmentResponse> => ({
  attachment: attachmentToMessage(await create(ctx, requirePrincipal(call).ownerId, req, call.requestId)),
});
