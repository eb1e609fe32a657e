// POST /v1/sessions/{session_id}/revert and /redo-revert (unshown-parts.md, Revert): rewinds
// the conversation and the documents to a turn, and undoes that.
import type { agentRevertV1 } from "@redline/grpc-stubs";
import type { z } from "zod";
import { defineRoute } from "../route-registry.js";
import {
  ChatSessionPathSchema,
  RedoRevertRequestSchema,
  RevertRequestSchema,
  RevertResponseSchema,
} from "../schemas-jobs.js";

function revertToJson(res: agentRevertV1.RevertSessionResponse): z.output<typeof RevertResponseSchema> {
  const state = res.documentState;
  return {
    session_id: res.sessionId,
    reverted_to_turn: res.revertedToTurn,
    compose_text: res.composeText,
    archived_turn_count: res.archivedTurnCount,
    document_state: state
      ? {
          html_content: state.htmlContent,
          version_id: state.versionId,
          chunk_count: state.chunkCount,
          last_modified: state.lastModified ? state.lastModified.toISOString() : null,
          attachments: [],
        }
      : null,
    editor_action: res.editorAction === "update" ? "update" : "clear",
    redo_checkpoint_id: res.redoCheckpointId || null,
  };
}

/**
 * Revert: turns from turn_index on leave the active history and every document returns to its
 * state before that turn as a new version. 409 while a job runs or awaits approval, 404 for a
 * turn not in the active history, 422 for a turn without a restore point.
 */
export const revertRoute = defineRoute({
  method: "post",
  path: "/v1/sessions/{session_id}/revert",
  operationId: "revertSession",
  summary: "Rewind a session to a turn",
  tags: ["sessions"],
  auth: true,
  params: ChatSessionPathSchema,
  body: RevertRequestSchema,
  response: { description: "The state after the revert and the redo token.", schema: RevertResponseSchema },
  errors: [404, 409],
  async handle({ params, body }, call) {
    const res = await call.ctx.revert.revertSession(
      { sessionId: params.session_id, turnIndex: body.turn_index, dryRun: body.dry_run },
      call.rpc(90_000),
    );
    return { body: revertToJson(res) };
  },
});

/** Redo-revert: undoes a revert (409 when undone already, superseded by new turns, or a job is open). */
export const redoRevertRoute = defineRoute({
  method: "post",
  path: "/v1/sessions/{session_id}/redo-revert",
  operationId: "redoRevert",
  summary: "Undo a revert",
  tags: ["sessions"],
  auth: true,
  params: ChatSessionPathSchema,
  body: RedoRevertRequestSchema,
  response: { description: "The state after the redo.", schema: RevertResponseSchema },
  errors: [400, 404, 409],
  async handle({ params, body }, call) {
    const res = await call.ctx.revert.redoRevert(
      { sessionId: params.session_id, turnIndex: body.turn_index, redoCheckpointId: body.redo_checkpoint_id },
      call.rpc(90_000),
    );
    return { body: revertToJson(res) };
  },
});
