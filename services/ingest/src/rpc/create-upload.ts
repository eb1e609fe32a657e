import { ownerOf } from "@redline/service-kit";
import { createUpload as create } from "../commands/uploads.js";
import type { FilesRpc } from "./call.js";

/** FilesService.CreateUpload (unshown-parts.md, Uploads): 400 bad purpose, 415 extension, 413 size; a signed PUT URL. */
export const createUpload: FilesRpc<"createUpload"> = (ctx, req, call) =>
  create(ctx, ownerOf(call), req, call.requestId);
