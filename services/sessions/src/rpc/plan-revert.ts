import type { sessionsCheckpointsV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { planRevert as plan } from "../commands/revert.js";
import type { Rpc } from "./types.js";

/** PlanRevert (unshown-parts.md, Revert): the turns, compose text and slots a revert to a turn touches. */
export const planRevert: Rpc<
  sessionsCheckpointsV1.PlanRevertRequest,
  sessionsCheckpointsV1.PlanRevertResponse
> = async (ctx, req, call) => {
  const { turns, composeText, openedSlots } = await plan(ctx.db, ownerOf(call), req.sessionId, req.turnIndex);
  return {
    turns,
    composeText,
    openedSlots: openedSlots.map((r) => ({ slotId: r.slot_id, documentId: r.document_id ?? "" })),
  };
};
