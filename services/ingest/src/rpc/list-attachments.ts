import { ownerOf } from "@redline/service-kit";
import { listAttachments as list } from "../commands/attachments.js";
import { attachmentToMessage } from "../mappers.js";
import type { FilesRpc } from "./call.js";

/** FilesService.ListAttachments (unshown-parts.md, Attachments): the session's attachments, oldest first. */
export const listAttachments: FilesRpc<"listAttachments"> = async (ctx, req, call) => ({
  attachments: (await list(ctx, ownerOf(call), req.sessionId)).map(attachmentToMessage),
});
