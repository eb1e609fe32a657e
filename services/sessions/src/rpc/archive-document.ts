import type { sessionsWorkspaceV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { archiveDocument as archive } from "../commands/workflows.js";
import { downstream, type Rpc } from "./types.js";

/** ArchiveDocument (endpoint 7): NOT_FOUND when not the caller's; 409 document_in_use when open elsewhere without force. */
export const archiveDocument: Rpc<
  sessionsWorkspaceV1.ArchiveDocumentRequest,
  sessionsWorkspaceV1.ArchiveDocumentResponse
> = async (ctx, req, call) => {
  const res = await archive(ctx, ownerOf(call), downstream(call), { ...req, documentId: req.durableDocumentId });
  return {
    durableDocumentId: res.documentId,
    alreadyArchived: res.alreadyArchived,
    unlinkedSessions: res.unlinkedSessions,
  };
};
