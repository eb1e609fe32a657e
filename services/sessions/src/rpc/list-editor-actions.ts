import type { sessionsWorkspaceV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { listEditorActions as list } from "../commands/editor-actions.js";
import { editorAction } from "../mappers.js";
import type { Rpc } from "./types.js";

/** ListEditorActions (endpoint 19): the session's last 500 editor actions, oldest first. */
export const listEditorActions: Rpc<
  sessionsWorkspaceV1.ListEditorActionsRequest,
  sessionsWorkspaceV1.ListEditorActionsResponse
> = async (ctx, req, call) => {
  return { actions: (await list(ctx.db, ownerOf(call), req.sessionId)).map(editorAction) };
};
