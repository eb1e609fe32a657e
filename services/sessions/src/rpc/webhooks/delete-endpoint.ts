import type { webhooksV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { deleteEndpoint as remove } from "../../commands/webhooks.js";
import type { Rpc } from "../types.js";

/** DeleteEndpoint: removes one of the caller's endpoints and its delivery log; NOT_FOUND otherwise. */
export const deleteEndpoint: Rpc<webhooksV1.DeleteEndpointRequest, webhooksV1.DeleteEndpointResponse> = async (
  ctx,
  req,
  call,
) => {
  await remove(ctx.db, ownerOf(call), req.id);
  return {};
};
