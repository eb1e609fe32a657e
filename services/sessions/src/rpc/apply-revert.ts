import type { sessionsCheckpointsV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { applyRevert as apply } from "../commands/revert.js";
import { restoredFromProto } from "../mappers.js";
import type { Rpc } from "./types.js";

/** ApplyRevert: deactivates the turns from one on, closes slots, stores the revert for redo. */
export const applyRevert: Rpc<
  sessionsCheckpointsV1.ApplyRevertRequest,
  sessionsCheckpointsV1.ApplyRevertResponse
> = async (ctx, req, call) => {
  const { redoId, archived } = await apply(ctx.db, ownerOf(call), {
    ...req,
    restored: restoredFromProto(req.restored),
  });
  return { redoCheckpointId: redoId, archivedTurnCount: archived };
};
