import { ownerOf } from "@redline/service-kit";
import * as read from "../commands/read.js";
import { documentMeta } from "../mappers.js";
import type { DocumentsRpc } from "./call.js";

/**
 * GetDocument: the caller's document (archived ones too) at head or at `version_id`, with its
 * chunks when `include_chunks`, and the chunks as loaded from its original with `include_source`. NotFoundError (404) naming the document or the version.
 */
export const getDocument: DocumentsRpc<"getDocument"> = async (ctx, req, call) => {
  const view = await read.getDocument(ctx.db, ownerOf(call), req);
  return {
    document: documentMeta(view.row, view.versionId),
    chunks: view.chunks,
    sourceChunks: view.sourceChunks ?? [],
  };
};
