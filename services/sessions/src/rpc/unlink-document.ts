import type { sessionsWorkspaceV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { unlinkDocument as unlink } from "../commands/roster.js";
import type { Rpc } from "./types.js";

/** UnlinkDocument: closes a document in every session of the caller (archive). */
export const unlinkDocument: Rpc<
  sessionsWorkspaceV1.UnlinkDocumentRequest,
  sessionsWorkspaceV1.UnlinkDocumentResponse
> = async (ctx, req, call) => {
  return { sessionIds: await unlink(ctx.db, ownerOf(call), req.durableDocumentId) };
};
