import type { ingestFilesV1 as pb } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import { getAttachment } from "../commands/attachments.js";
import type { IngestContext } from "../context.js";
import { attachmentToMessage } from "../mappers.js";

/** FilesService.GetAttachmentJob (interface-spec 21, GET /v1/jobs/att_…): one of the caller's attachments; 404 otherwise. */
export const getAttachmentJob = async (
  ctx: IngestContext,
  req: pb.GetAttachmentJobRequest,
  call: CallContext,
): Promise<pb.GetAttachmentJobResponse> => ({
  attachment: attachmentToMessage(await getAttachment(ctx, requirePrincipal(call).ownerId, req.attachmentId)),
});
