import type { webhooksV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { listEndpoints as list } from "../../commands/webhooks.js";
import { webhookEndpointMessage } from "../../mappers.js";
import type { Rpc } from "../types.js";

/** ListEndpoints: the caller's endpoints, newest first, without secrets. */
export const listEndpoints: Rpc<webhooksV1.ListEndpointsRequest, webhooksV1.ListEndpointsResponse> = async (
  ctx,
  _req,
  call,
) => {
  return { endpoints: (await list(ctx.db, ownerOf(call))).map(webhookEndpointMessage) };
};
