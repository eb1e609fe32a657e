import { ownerOf } from "@redline/service-kit";
import { createDownload as create } from "../commands/deliveries.js";
import { withSource } from "../commands/exports.js";
import { exportJobFromRequest } from "../mappers.js";
import type { FilesRpc } from "./call.js";

/**
 * FilesService.CreateDownload (unshown-parts.md, Export): export now (in place when the request
 * carries the caller's original of that format), store, sign a 15-minute link; export errors.
 */
export const createDownload: FilesRpc<"createDownload"> = async (ctx, req, call) => {
  const ownerId = ownerOf(call);
  const job = await withSource(ctx, ownerId, exportJobFromRequest(req.export), req.export?.source, call.log);
  return create(ctx, { ownerId, deadline: call.deadline }, job, req.filename);
};
