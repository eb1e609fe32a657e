import * as load from "../commands/load.js";
import { documentMeta, parsePageSetup } from "../mappers.js";
import { type DocumentsRpc, ownerOf } from "./call.js";

/**
 * CreateDocument: stores raw HTML (sanitized, chunked) as a new document at version 1 with a
 * `document_created` event; an idempotency key makes a retry answer the first copy. InputError
 * (400) for a page setup that is not a JSON object.
 */
export const createDocument: DocumentsRpc<"createDocument"> = async (ctx, req, call) => {
  const { pageSetupJson, ...rest } = req;
  const view = await load.createDocument(ctx.db, ownerOf(call), { ...rest, pageSetup: parsePageSetup(pageSetupJson) });
  ctx.relay.kick();
  return { document: documentMeta(view.row, view.versionId), chunks: view.chunks };
};
