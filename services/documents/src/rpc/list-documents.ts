import { ownerOf } from "@redline/service-kit";
import * as library from "../commands/library.js";
import { documentMeta } from "../mappers.js";
import type { LibraryRpc } from "./call.js";

/** ListDocuments (endpoint 3): a page of the caller's active or archived documents, most recently updated first. */
export const listDocuments: LibraryRpc<"listDocuments"> = async (ctx, req, call) => {
  const { documents, total } = await library.listDocuments(ctx.db, ownerOf(call), req);
  return { documents: documents.map((d) => ({ document: documentMeta(d.row), previewHtml: d.previewHtml })), total };
};
