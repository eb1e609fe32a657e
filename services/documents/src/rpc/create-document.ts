import { ownerOf, traceparentOf } from "@redline/service-kit";
import * as load from "../commands/load.js";
import { documentMeta, pageSetupFromProto, versionAuthor } from "../mappers.js";
import type { DocumentsRpc } from "./call.js";

/**
 * CreateDocument: stores raw HTML (sanitized, chunked) as a new document at version 1 with a
 * `document_created` event; an idempotency key makes a retry answer the first copy (`replayed`).
 */
export const createDocument: DocumentsRpc<"createDocument"> = async (ctx, req, call) => {
  const { pageSetup, ...rest } = req;
  const view = await load.createDocument(ctx.db, ownerOf(call), {
    ...rest,
    pageSetup: pageSetupFromProto(pageSetup),
    author: versionAuthor(call, req.authorKind),
    traceparent: traceparentOf(call.trace),
  });
  ctx.relay.kick();
  return { document: documentMeta(view.row, view.versionId), chunks: view.chunks, replayed: view.replayed };
};
