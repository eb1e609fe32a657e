import { ownerOf } from "@redline/service-kit";
import { getUpload as get } from "../commands/uploads.js";
import type { FilesRpc } from "./call.js";

/** FilesService.GetUpload (unshown-parts.md, Uploads): the caller's upload slot and its purpose; 404 unknown/expired. */
export const getUpload: FilesRpc<"getUpload"> = async (ctx, req, call) => {
  const row = await get(ctx, ownerOf(call), req.uploadId);
  return {
    uploadId: row.id,
    filename: row.filename,
    contentType: row.content_type,
    sizeBytes: Number(row.size_bytes),
    purpose: row.purpose,
    expiresAt: row.expires_at,
  };
};
