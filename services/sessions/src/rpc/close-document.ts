import type { sessionsWorkspaceV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { closeDocument as close } from "../commands/roster.js";
import { rosterEntry, sessionMessage } from "../mappers.js";
import type { Rpc } from "./types.js";

/** CloseDocument (endpoint 17): closes a document in the session and moves the focus. */
export const closeDocument: Rpc<
  sessionsWorkspaceV1.CloseDocumentRequest,
  sessionsWorkspaceV1.CloseDocumentResponse
> = async (ctx, req, call) => {
  const { view, closed } = await close(ctx.db, ownerOf(call), req);
  return { session: sessionMessage(view), closed: rosterEntry(closed) };
};
