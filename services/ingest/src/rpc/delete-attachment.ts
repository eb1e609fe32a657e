import type { ingestFilesV1 as pb } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import { deleteAttachment as remove } from "../commands/attachments.js";
import type { IngestContext } from "../context.js";
import { attachmentToMessage } from "../mappers.js";

/** FilesService.DeleteAttachment (unshown-parts.md, Attachments): soft delete, cancels processing; 404 otherwise. */
export const deleteAttachment = async (
  ctx: IngestContext,
  req: pb.DeleteAttachmentRequest,
  call: CallContext,
): Promise<pb.DeleteAttachmentResponse> => ({
  attachment: attachmentToMessage(await remove(ctx, requirePrincipal(call).ownerId, req.attachmentId)),
});
