// Handlers of sessions.v1.SessionCheckpointsService (revert and redo-revert).
import { sessionsCheckpointsV1 } from "@redline/grpc-stubs";
import { bindService, type Knex, requirePrincipal } from "@redline/service-kit";
import { applyRevert, getRevert, planRevert, type RestoredDoc, undoRevert } from "./commands/revert.js";

function restoredToProto(r: RestoredDoc): sessionsCheckpointsV1.RestoredDocument {
  return { documentId: r.document_id, fromVersionId: r.from_version_id, toVersionId: r.to_version_id };
}

/** Handlers of SessionCheckpointsService; every call is scoped to the caller's owner id. */
export function checkpointsHandlers(db: Knex) {
  return bindService(sessionsCheckpointsV1.SessionCheckpointsServiceService, {
    async planRevert(req, ctx) {
      const plan = await planRevert(db, requirePrincipal(ctx).ownerId, req.sessionId, req.turnIndex);
      return {
        turns: plan.turns,
        composeText: plan.composeText,
        openedSlots: plan.openedSlots.map((r) => ({ slotId: r.slot_id, documentId: r.document_id ?? "" })),
      };
    },
    async applyRevert(req, ctx) {
      const { redoId, archived } = await applyRevert(db, requirePrincipal(ctx).ownerId, {
        sessionId: req.sessionId,
        turnIndex: req.turnIndex,
        closeSlotIds: req.closeSlotIds,
        restored: req.restored.map((r) => ({
          document_id: r.documentId,
          from_version_id: r.fromVersionId,
          to_version_id: r.toVersionId,
        })),
      });
      return { redoCheckpointId: redoId, archivedTurnCount: archived };
    },
    async getRevert(req, ctx) {
      const row = await getRevert(db, requirePrincipal(ctx).ownerId, req.sessionId, req.redoCheckpointId);
      return {
        revert: {
          redoCheckpointId: row.id,
          turnIndex: row.turn_index,
          restored: row.restored.map(restoredToProto),
          closedSlotIds: row.closed_slot_ids,
          undone: row.undone_at !== null,
          createdAt: row.created_at,
        },
      };
    },
    async undoRevert(req, ctx) {
      const count = await undoRevert(db, requirePrincipal(ctx).ownerId, req.sessionId, req.redoCheckpointId);
      return { restoredTurnCount: count };
    },
  });
}
