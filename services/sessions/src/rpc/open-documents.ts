import type { sessionsWorkspaceV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { openDocuments as open } from "../commands/roster.js";
import { rosterEntry, sessionMessage } from "../mappers.js";
import type { Rpc } from "./types.js";

/** OpenDocuments (endpoints 9, 10, 12): attaches saved documents, the first focused; INVALID_ARGUMENT for non-UUID ids. */
export const openDocuments: Rpc<
  sessionsWorkspaceV1.OpenDocumentsRequest,
  sessionsWorkspaceV1.OpenDocumentsResponse
> = async (ctx, req, call) => {
  const { view, opened } = await open(ctx.db, ownerOf(call), req);
  return { session: sessionMessage(view), opened: opened.map(rosterEntry) };
};
