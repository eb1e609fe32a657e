import type { sessionsCheckpointsV1 } from "@redline/grpc-stubs";
import { undoRevert as undo } from "../commands/revert.js";
import { ownerOf, type Rpc } from "./types.js";

/** UndoRevert (redo-revert): reactivates a revert's turns; FAILED_PRECONDITION when undone or superseded. */
export const undoRevert: Rpc<
  sessionsCheckpointsV1.UndoRevertRequest,
  sessionsCheckpointsV1.UndoRevertResponse
> = async (ctx, req, call) => {
  return { restoredTurnCount: await undo(ctx.db, ownerOf(call), req.sessionId, req.redoCheckpointId) };
};
