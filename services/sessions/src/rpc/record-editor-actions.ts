import type { sessionsWorkspaceV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { recordEditorActions as record } from "../commands/editor-actions.js";
import { editorAction, editorActionsFromProto } from "../mappers.js";
import type { Rpc } from "./types.js";

/** RecordEditorActions: stores editor actions in order; INVALID_ARGUMENT when details are not a JSON object. */
export const recordEditorActions: Rpc<
  sessionsWorkspaceV1.RecordEditorActionsRequest,
  sessionsWorkspaceV1.RecordEditorActionsResponse
> = async (ctx, req, call) => {
  const rows = await record(ctx.db, ownerOf(call), req.sessionId, editorActionsFromProto(req.actions));
  return { actions: rows.map(editorAction) };
};
