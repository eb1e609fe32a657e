import { ownerOf } from "@redline/service-kit";
import { getAttachment } from "../commands/attachments.js";
import { attachmentToMessage } from "../mappers.js";
import type { FilesRpc } from "./call.js";

/** FilesService.GetAttachmentJob (interface-spec 21, GET /v1/jobs/att_…): one of the caller's attachments; 404 otherwise. */
export const getAttachmentJob: FilesRpc<"getAttachmentJob"> = async (ctx, req, call) => ({
  attachment: attachmentToMessage(await getAttachment(ctx, ownerOf(call), req.attachmentId)),
});
