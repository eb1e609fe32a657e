import { ownerOf, traceparentOf } from "@redline/service-kit";
import * as conflicts from "../commands/conflicts.js";
import { documentMeta, versionAuthor } from "../mappers.js";
import type { LibraryRpc } from "./call.js";

/** ResolveConflict (endpoint 18): writes the resolved chunk on head and closes its open conflicts; 404 for an unknown conflict, document or chunk. */
export const resolveConflict: LibraryRpc<"resolveConflict"> = async (ctx, req, call) => {
  const { row, html } = await conflicts.resolveConflict(ctx.db, ownerOf(call), {
    ...req,
    author: versionAuthor(call, req.authorKind),
    traceparent: traceparentOf(call.trace),
  });
  ctx.relay.kick();
  return { document: documentMeta(row), html };
};
