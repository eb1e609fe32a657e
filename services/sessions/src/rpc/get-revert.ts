import type { sessionsCheckpointsV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { getRevert as get } from "../commands/revert.js";
import { revertMessage } from "../mappers.js";
import type { Rpc } from "./types.js";

/** GetRevert: a stored revert of the caller's session; NOT_FOUND when unknown. */
export const getRevert: Rpc<sessionsCheckpointsV1.GetRevertRequest, sessionsCheckpointsV1.GetRevertResponse> = async (
  ctx,
  req,
  call,
) => {
  return { revert: revertMessage(await get(ctx.db, ownerOf(call), req.sessionId, req.redoCheckpointId)) };
};
