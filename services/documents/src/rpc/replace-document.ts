import { ownerOf, traceparentOf } from "@redline/service-kit";
import * as load from "../commands/load.js";
import { documentMeta, pageSetupFromProto, versionAuthor } from "../mappers.js";
import type { DocumentsRpc } from "./call.js";

/**
 * ReplaceDocument: loads HTML verbatim as a new version of the caller's document (unchanged
 * chunks keep their revision), with a `document_updated` event (kind `replace`). NotFoundError
 * (404) for an unknown or foreign id.
 */
export const replaceDocument: DocumentsRpc<"replaceDocument"> = async (ctx, req, call) => {
  const { pageSetup, ...rest } = req;
  const view = await load.replaceDocument(ctx.db, ownerOf(call), {
    ...rest,
    pageSetup: pageSetupFromProto(pageSetup),
    author: versionAuthor(call, req.authorKind),
    traceparent: traceparentOf(call.trace),
  });
  ctx.relay.kick();
  return { document: documentMeta(view.row, view.versionId), chunks: view.chunks };
};
