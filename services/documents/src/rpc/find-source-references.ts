import { InputError, ownerOf } from "@redline/service-kit";
import { referencedSources } from "../db/store/documents.js";
import type { LibraryRpc } from "./call.js";

/** Ids one call may ask about: a sweep's batch, with room to spare. */
const MAX_SOURCE_IDS = 1000;

/**
 * FindSourceReferences (ingest's retention sweep, README "Retention"): which of `source_ids` a
 * document of the caller's, archived or not, names as its original; InputError (INVALID_ARGUMENT)
 * over 1,000 ids. Another owner's ids read as not referenced, as unknown ones do.
 */
export const findSourceReferences: LibraryRpc<"findSourceReferences"> = async (ctx, req, call) => {
  if (req.sourceIds.length > MAX_SOURCE_IDS)
    throw new InputError(`At most ${MAX_SOURCE_IDS} source ids per call; got ${req.sourceIds.length}`);
  const ids = [...new Set(req.sourceIds)];
  return { referencedSourceIds: await referencedSources(ctx.db, ownerOf(call), ids) };
};
