import { ownerOf, traceparentOf } from "@redline/service-kit";
import * as save from "../commands/save.js";
import { saveResponse, versionAuthor } from "../mappers.js";
import type { LibraryRpc } from "./call.js";

/**
 * SaveDocument (endpoint 11): the user's edited HTML, diffed against its base and merged at chunk
 * level. ConflictError (409 `chunk_conflict`) on overlap, nothing written; 404 when not the caller's.
 */
export const saveDocument: LibraryRpc<"saveDocument"> = async (ctx, req, call) => {
  const result = await save.saveDocument(ctx.db, ownerOf(call), {
    ...req,
    author: versionAuthor(call, undefined),
    traceparent: traceparentOf(call.trace),
  });
  if (result.changedChunkIds.length > 0) ctx.relay.kick();
  return saveResponse(result);
};
