import { InputError, ownerOf, traceparentOf } from "@redline/service-kit";
import * as library from "../commands/library.js";
import { documentMeta, pageSetupFromProto } from "../mappers.js";
import type { LibraryRpc } from "./call.js";

/**
 * UpdateDocument (endpoint 6): renames (trimmed, at most 500 characters) and/or sets the page
 * setup (clear_page_setup removes it), with a `metadata` event. InputError (400) for an empty
 * title or both page_setup and clear_page_setup; NotFoundError (404) when not the caller's.
 */
export const updateDocument: LibraryRpc<"updateDocument"> = async (ctx, req, call) => {
  const title = req.title?.trim();
  if (req.title !== undefined && !title) throw new InputError("title must not be empty");
  if (req.pageSetup && req.clearPageSetup) throw new InputError("send page_setup or clear_page_setup, not both");
  const { pageSetup: given, clearPageSetup, ...rest } = req;
  const pageSetup = clearPageSetup ? null : pageSetupFromProto(given);
  const row = await library.updateDocument(ctx.db, ownerOf(call), {
    ...rest,
    title: title?.slice(0, 500),
    pageSetup,
    traceparent: traceparentOf(call.trace),
  });
  ctx.relay.kick();
  return { document: documentMeta(row) };
};
