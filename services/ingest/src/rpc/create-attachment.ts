import { ownerOf } from "@redline/service-kit";
import { createAttachment as create } from "../commands/attachments.js";
import { attachmentToMessage } from "../mappers.js";
import type { FilesRpc } from "./call.js";

/** FilesService.CreateAttachment (unshown-parts.md, Attachments): 415 extension, 413 over 50 MB, 400 empty; pending. */
export const createAttachment: FilesRpc<"createAttachment"> = async (ctx, req, call) => ({
  attachment: attachmentToMessage(await create(ctx, ownerOf(call), req, call.requestId)),
});
