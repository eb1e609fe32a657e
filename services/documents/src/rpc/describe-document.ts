import { ownerOf } from "@redline/service-kit";
import * as library from "../commands/library.js";
import { documentMeta } from "../mappers.js";
import type { LibraryRpc } from "./call.js";

/** DescribeDocument (endpoint 5): metadata, structure and chunks at head; NotFoundError (404) when not the caller's. */
export const describeDocument: LibraryRpc<"describeDocument"> = async (ctx, req, call) => {
  const { row, chunks, structure } = await library.describeDocument(ctx.db, ownerOf(call), req.documentId);
  return { document: documentMeta(row), structure, chunks };
};
