import { ownerOf } from "@redline/service-kit";
import { getMedia as readMedia } from "../commands/media.js";
import type { FilesRpc } from "./call.js";

/** FilesService.GetMedia (ARCHITECTURE, Images): the caller's image; 404 for another owner's or an unknown id. */
export const getMedia: FilesRpc<"getMedia"> = async (ctx, req, call) => {
  const media = await readMedia(ctx, ownerOf(call), req.mediaId);
  return { content: media.bytes, contentType: media.contentType };
};
