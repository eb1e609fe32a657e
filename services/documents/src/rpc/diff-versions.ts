import { ownerOf } from "@redline/service-kit";
import * as versions from "../commands/versions.js";
import { versionInfo } from "../mappers.js";
import type { LibraryRpc } from "./call.js";

/**
 * DiffVersions: the change records from `against_version_id` (default: the predecessor) to
 * `version_id` of the caller's document. NotFoundError (404) naming the document or a version.
 */
export const diffVersions: LibraryRpc<"diffVersions"> = async (ctx, req, call) => {
  const res = await versions.diffVersions(ctx.db, ownerOf(call), req);
  return {
    version: versionInfo(res.version),
    against: res.against && versionInfo(res.against),
    changes: res.changes,
  };
};
