import type { sessionsWorkspaceV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { listWatchedDocuments as watched } from "../commands/roster.js";
import type { Rpc } from "./types.js";

/** ListWatchedDocuments (endpoint 15): documents whose events the session receives. */
export const listWatchedDocuments: Rpc<
  sessionsWorkspaceV1.ListWatchedDocumentsRequest,
  sessionsWorkspaceV1.ListWatchedDocumentsResponse
> = async (ctx, req, call) => {
  const docs = await watched(ctx.db, ownerOf(call), req.sessionId);
  return { documents: docs.map((d) => ({ durableDocumentId: d.documentId, slotId: d.slotId })) };
};
