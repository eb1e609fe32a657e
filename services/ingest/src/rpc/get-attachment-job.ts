import { ownerOf } from "@redline/service-kit";
import { getAttachmentJob as get } from "../commands/attachment-jobs.js";
import { attachmentJobToMessage } from "../mappers.js";
import type { FilesRpc } from "./call.js";

/**
 * FilesService.GetAttachmentJob (interface-spec 21, GET /v1/jobs/att_…): one of the caller's
 * attachment jobs with its job status; 404 when unknown, another owner's, or removed 1 hour after it ended.
 */
export const getAttachmentJob: FilesRpc<"getAttachmentJob"> = async (ctx, req, call) => {
  const job = attachmentJobToMessage(await get(ctx, ownerOf(call), req.attachmentId));
  return { attachment: job.attachment, job };
};
