import type { sessionsWorkspaceV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { saveToSlot as save } from "../commands/workflows.js";
import { editorActionsFromProto, rosterEntry } from "../mappers.js";
import { downstream, type Rpc } from "./types.js";

/** SaveToSlot (endpoint 14, human save): NOT_FOUND when the slot is not open; 409 chunk_conflict from documents. */
export const saveToSlot: Rpc<sessionsWorkspaceV1.SaveToSlotRequest, sessionsWorkspaceV1.SaveToSlotResponse> = async (
  ctx,
  req,
  call,
) => {
  const { entry, saved } = await save(ctx, ownerOf(call), downstream(call), {
    ...req,
    editorActions: editorActionsFromProto(req.editorActions),
  });
  const { durableId, versionId, changed, merged, html, created } = saved;
  return {
    entry: rosterEntry(entry),
    durableDocumentId: durableId,
    versionId,
    changedChunkIds: changed,
    merged,
    html,
    created,
  };
};
