import type { sessionsWorkspaceV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { focusDocument as focus } from "../commands/roster.js";
import { rosterEntry, sessionMessage } from "../mappers.js";
import type { Rpc } from "./types.js";

/** FocusDocument (endpoint 16): focuses an open document. */
export const focusDocument: Rpc<
  sessionsWorkspaceV1.FocusDocumentRequest,
  sessionsWorkspaceV1.FocusDocumentResponse
> = async (ctx, req, call) => {
  const res = await focus(ctx.db, ownerOf(call), req);
  return { session: sessionMessage(res.view), entry: rosterEntry(res.entry) };
};
