import type { sessionsWorkspaceV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { unarchiveInSession as unarchive } from "../commands/workflows.js";
import { editorActionsFromProto, sessionMessage } from "../mappers.js";
import { downstream, type Rpc } from "./types.js";

/** UnarchiveInSession (endpoint 18, session form): restore, re-open focused, optionally save on top. */
export const unarchiveInSession: Rpc<
  sessionsWorkspaceV1.UnarchiveInSessionRequest,
  sessionsWorkspaceV1.UnarchiveInSessionResponse
> = async (ctx, req, call) => {
  const res = await unarchive(ctx, ownerOf(call), downstream(call), {
    ...req,
    editorActions: editorActionsFromProto(req.editorActions),
  });
  return {
    session: sessionMessage(res.view),
    found: res.found,
    unarchived: res.unarchived,
    durableDocumentId: res.durableId,
  };
};
