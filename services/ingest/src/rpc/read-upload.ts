import { ownerOf } from "@redline/service-kit";
import { readUpload as read } from "../commands/uploads.js";
import type { FilesRpc } from "./call.js";

/** FilesService.ReadUpload (unshown-parts.md, Uploads): the bytes PUT to the caller's upload; 404 unknown/expired/never PUT, 413 too big. */
export const readUpload: FilesRpc<"readUpload"> = async (ctx, req, call) => {
  const { row, bytes } = await read(ctx, ownerOf(call), req.uploadId, call.requestId);
  return { filename: row.filename, purpose: row.purpose, content: bytes };
};
