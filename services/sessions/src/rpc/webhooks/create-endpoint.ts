import type { webhooksV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { createEndpoint as create } from "../../commands/webhooks.js";
import { webhookEndpointMessage } from "../../mappers.js";
import type { Rpc } from "../types.js";

/** CreateEndpoint: the caller's new endpoint and its secret (returned here only); 422 for a refused URL or event, 409 past the cap. */
export const createEndpoint: Rpc<webhooksV1.CreateEndpointRequest, webhooksV1.CreateEndpointResponse> = async (
  ctx,
  req,
  call,
) => {
  const row = await create(ctx.db, ctx.webhooks, ownerOf(call), req);
  return { endpoint: webhookEndpointMessage(row), secret: row.secret };
};
