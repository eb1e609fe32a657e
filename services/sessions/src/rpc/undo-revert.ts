import type { sessionsCheckpointsV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { undoRevert as undo } from "../commands/revert.js";
import type { Rpc } from "./types.js";

/** UndoRevert (redo-revert): reactivates a revert's turns; FAILED_PRECONDITION when undone or superseded. */
export const undoRevert: Rpc<
  sessionsCheckpointsV1.UndoRevertRequest,
  sessionsCheckpointsV1.UndoRevertResponse
> = async (ctx, req, call) => {
  return { restoredTurnCount: await undo(ctx.db, ownerOf(call), req.sessionId, req.redoCheckpointId) };
};
