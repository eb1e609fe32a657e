import { ownerOf } from "@redline/service-kit";
import * as library from "../commands/library.js";
import { documentMeta } from "../mappers.js";
import type { LibraryRpc } from "./call.js";

/** GetDocumentsMeta: metadata of the caller's documents among `document_ids` (others are left out). */
export const getDocumentsMeta: LibraryRpc<"getDocumentsMeta"> = async (ctx, req, call) => {
  const rows = await library.documentsMeta(ctx.db, ownerOf(call), req.documentIds);
  return { documents: rows.map((row) => documentMeta(row)) };
};
