import { InputError } from "@redline/service-kit";
import * as library from "../commands/library.js";
import { documentMeta, parsePageSetup } from "../mappers.js";
import { type LibraryRpc, ownerOf } from "./call.js";

/**
 * UpdateDocument (endpoint 6): renames (trimmed, at most 500 characters) and/or sets the page
 * setup, with a `metadata` event. InputError (400) for an empty title or a page setup that is
 * not a JSON object; NotFoundError (404) when not the caller's.
 */
export const updateDocument: LibraryRpc<"updateDocument"> = async (ctx, req, call) => {
  const title = req.title?.trim();
  if (req.title !== undefined && !title) throw new InputError("title must not be empty");
  const pageSetup = req.pageSetupJson === undefined ? undefined : (parsePageSetup(req.pageSetupJson) ?? null);
  const row = await library.updateDocument(ctx.db, ownerOf(call), { ...req, title: title?.slice(0, 500), pageSetup });
  ctx.relay.kick();
  return { document: documentMeta(row) };
};
