import type { ingestFilesV1 as pb } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import { listAttachments as list } from "../commands/attachments.js";
import type { IngestContext } from "../context.js";
import { attachmentToMessage } from "../mappers.js";

/** FilesService.ListAttachments (unshown-parts.md, Attachments): the session's attachments, oldest first. */
export const listAttachments = async (
  ctx: IngestContext,
  req: pb.ListAttachmentsRequest,
  call: CallContext,
): Promise<pb.ListAttachmentsResponse> => ({
  attachments: (await list(ctx, requirePrincipal(call).ownerId, req.sessionId)).map(attachmentToMessage),
});
