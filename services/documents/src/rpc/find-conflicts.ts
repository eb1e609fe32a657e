import { ownerOf } from "@redline/service-kit";
import * as conflicts from "../commands/conflicts.js";
import { conflictRecord } from "../mappers.js";
import type { LibraryRpc } from "./call.js";

/** FindConflicts (endpoint 18): open conflicts of one chunk, newest first, or the document holding the chunk. */
export const findConflicts: LibraryRpc<"findConflicts"> = async (ctx, req, call) => {
  const found = await conflicts.findConflicts(ctx.db, ownerOf(call), req.documentIds, req.chunkId);
  return { conflicts: found.conflicts.map(conflictRecord), documentId: found.documentId };
};
