import type { webhooksV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { listDeliveries as list } from "../../commands/webhooks.js";
import { webhookDeliveryMessage } from "../../mappers.js";
import type { Rpc } from "../types.js";

/** ListDeliveries: the endpoint's delivery log, newest first (limit 1..200, 0: 50); NOT_FOUND for another's endpoint. */
export const listDeliveries: Rpc<webhooksV1.ListDeliveriesRequest, webhooksV1.ListDeliveriesResponse> = async (
  ctx,
  req,
  call,
) => {
  return { deliveries: (await list(ctx.db, ownerOf(call), req.endpointId, req.limit)).map(webhookDeliveryMessage) };
};
