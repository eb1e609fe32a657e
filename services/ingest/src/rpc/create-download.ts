import { ownerOf } from "@redline/service-kit";
import { createDownload as create } from "../commands/deliveries.js";
import { exportJobFromRequest } from "../mappers.js";
import type { FilesRpc } from "./call.js";

/** FilesService.CreateDownload (unshown-parts.md, Export): export now, store, sign a 15-minute link; export errors. */
export const createDownload: FilesRpc<"createDownload"> = (ctx, req, call) =>
  create(ctx, { ownerId: ownerOf(call), deadline: call.deadline }, exportJobFromRequest(req.export), req.filename);
