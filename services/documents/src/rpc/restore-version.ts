import { ownerOf, traceparentOf } from "@redline/service-kit";
import { restoreVersion as restore } from "../commands/restore.js";
import { versionAuthor, versionInfo } from "../mappers.js";
import type { LibraryRpc } from "./call.js";

/**
 * RestoreVersion: a new version of the caller's document equal to `version_id`, attributed to the
 * calling user, with a `document_updated` event (kind `restore`); `restored` false (nothing
 * written, head answered) when head already has that content. NotFoundError (404) naming the
 * document or the version; ConflictError (409 `document_archived`) for an archived document.
 */
export const restoreVersion: LibraryRpc<"restoreVersion"> = async (ctx, req, call) => {
  const result = await restore(ctx.db, ownerOf(call), {
    ...req,
    author: versionAuthor(call, undefined),
    traceparent: traceparentOf(call.trace),
  });
  if (result.restored) ctx.relay.kick();
  return { version: versionInfo(result.version), restored: result.restored, changedChunkIds: result.changedChunkIds };
};
