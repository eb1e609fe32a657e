import { ownerOf, traceparentOf } from "@redline/service-kit";
import * as library from "../commands/library.js";
import { documentMeta } from "../mappers.js";
import type { LibraryRpc } from "./call.js";

/** ArchiveDocument (endpoint 7, after the gateway's in-use check): `already_archived` when nothing changed; 404 when not the caller's. */
export const archiveDocument: LibraryRpc<"archiveDocument"> = async (ctx, req, call) => {
  const { row, alreadyArchived } = await library.archiveDocument(ctx.db, ownerOf(call), {
    ...req,
    traceparent: traceparentOf(call.trace),
  });
  if (!alreadyArchived) ctx.relay.kick();
  return { document: documentMeta(row), alreadyArchived };
};
