import { ownerOf } from "@redline/service-kit";
import * as versions from "../commands/versions.js";
import { versionInfo } from "../mappers.js";
import type { LibraryRpc } from "./call.js";

/**
 * GetVersion: one version of the caller's document, and its HTML when `include_html`.
 * NotFoundError (404) naming the document (unknown or foreign) or the version (not of that document).
 */
export const getVersion: LibraryRpc<"getVersion"> = async (ctx, req, call) => {
  const { version, html } = await versions.getVersion(ctx.db, ownerOf(call), req);
  return { version: versionInfo(version), html };
};
