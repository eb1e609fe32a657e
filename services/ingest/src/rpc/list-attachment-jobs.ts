import { ownerOf } from "@redline/service-kit";
import { listAttachmentJobs as list } from "../commands/attachment-jobs.js";
import { attachmentJobToMessage } from "../mappers.js";
import type { FilesRpc } from "./call.js";

/**
 * FilesService.ListAttachmentJobs (interface-spec 20 and 22): the caller's attachment_processing
 * jobs, newest first, by job status ("" all; others none) and session ("" all); limit 1..200.
 */
export const listAttachmentJobs: FilesRpc<"listAttachmentJobs"> = async (ctx, req, call) => ({
  jobs: (await list(ctx, ownerOf(call), req)).map(attachmentJobToMessage),
});
