import { ownerOf } from "@redline/service-kit";
import { searchAttachments as search } from "../commands/attachments.js";
import type { FilesRpc } from "./call.js";

/**
 * FilesService.SearchAttachments (ARCHITECTURE, Attachments): ranked passages of the session's
 * completed attachments (websearch syntax), its image attachments for vision, and their count.
 */
export const searchAttachments: FilesRpc<"searchAttachments"> = async (ctx, req, call) => {
  const found = await search(ctx, { ...req, ownerId: ownerOf(call) });
  return {
    passages: found.passages.map((p) => ({
      attachmentId: p.attachment_id,
      filename: p.filename,
      chunkIndex: p.seq,
      text: p.text,
    })),
    images: found.images.map((i) => ({
      filename: i.row.filename,
      mimeType: i.row.content_type,
      base64Data: i.base64Data,
    })),
    attachmentCount: found.attachmentCount,
  };
};
