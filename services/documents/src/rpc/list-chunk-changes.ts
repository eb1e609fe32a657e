import { ownerOf } from "@redline/service-kit";
import * as versions from "../commands/versions.js";
import type { LibraryRpc } from "./call.js";

/**
 * ListChunkChanges: the chunks of the caller's document that differ between `since_seq` and head,
 * with the author and date of the latest version touching each (the tracked-changes export).
 * NOT_FOUND for an unknown or foreign document; INVALID_ARGUMENT (422) for a seq outside 1..head.
 */
export const listChunkChanges: LibraryRpc<"listChunkChanges"> = async (ctx, req, call) => {
  const res = await versions.chunkChangesSince(ctx.db, ownerOf(call), req);
  const changes = res.changes.map(({ html: _head, ...change }) => change);
  return { sinceSeq: res.sinceSeq, headSeq: res.headSeq, changes };
};
