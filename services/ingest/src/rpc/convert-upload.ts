import { ownerOf } from "@redline/service-kit";
import { convertUpload as convert } from "../commands/uploads.js";
import { convertedToMessage } from "../mappers.js";
import type { FilesRpc } from "./call.js";

/** FilesService.ConvertUpload (unshown-parts.md, Uploads): the upload converted; 404 unknown/expired, 413 too big. */
export const convertUpload: FilesRpc<"convertUpload"> = async (ctx, req, call) => {
  const done = await convert(ctx, ownerOf(call), req.uploadId, call.requestId, req.keepSource === true);
  return { converted: convertedToMessage(done.converted), filename: done.filename, purpose: done.purpose };
};
