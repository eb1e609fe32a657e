import { ownerOf, traceparentOf } from "@redline/service-kit";
import * as library from "../commands/library.js";
import { documentMeta } from "../mappers.js";
import type { LibraryRpc } from "./call.js";

/** UnarchiveDocument (endpoints 8 and 12): idempotent; `found` false for an unknown or foreign id (nothing revealed). */
export const unarchiveDocument: LibraryRpc<"unarchiveDocument"> = async (ctx, req, call) => {
  const { row, unarchived } = await library.unarchiveDocument(ctx.db, ownerOf(call), {
    ...req,
    traceparent: traceparentOf(call.trace),
  });
  if (unarchived) ctx.relay.kick();
  return { found: row !== undefined, unarchived, document: row && documentMeta(row) };
};
