import { ownerOf } from "@redline/service-kit";
import * as versions from "../commands/versions.js";
import { versionInfo } from "../mappers.js";
import type { LibraryRpc } from "./call.js";

/**
 * ListVersions: a page of the caller's document's versions, newest first (`limit` 0 → 50, at
 * most 200), with `total`. Archived documents are listed; NotFoundError (404) when not the caller's.
 */
export const listVersions: LibraryRpc<"listVersions"> = async (ctx, req, call) => {
  const page = await versions.listVersions(ctx.db, ownerOf(call), req);
  return { versions: page.versions.map(versionInfo), total: page.total };
};
