import { ownerOf } from "@redline/service-kit";
import { deleteAttachment as remove } from "../commands/attachments.js";
import { attachmentToMessage } from "../mappers.js";
import type { FilesRpc } from "./call.js";

/** FilesService.DeleteAttachment (unshown-parts.md, Attachments): soft delete, cancels processing; 404 otherwise. */
export const deleteAttachment: FilesRpc<"deleteAttachment"> = async (ctx, req, call) => ({
  attachment: attachmentToMessage(await remove(ctx, ownerOf(call), req.attachmentId)),
});
