import type { webhooksV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { getEndpoint as get } from "../../commands/webhooks.js";
import { webhookEndpointMessage } from "../../mappers.js";
import type { Rpc } from "../types.js";

/** GetEndpoint: one of the caller's endpoints without its secret; NOT_FOUND otherwise. */
export const getEndpoint: Rpc<webhooksV1.GetEndpointRequest, webhooksV1.GetEndpointResponse> = async (
  ctx,
  req,
  call,
) => {
  return { endpoint: webhookEndpointMessage(await get(ctx.db, ownerOf(call), req.id)) };
};
