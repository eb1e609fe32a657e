// Outbound webhooks: POST, GET /v1/webhooks, GET and DELETE /v1/webhooks/{webhook_id} and the
// delivery log GET /v1/webhooks/{webhook_id}/deliveries (docs/api.md, Webhooks). Endpoints belong
// to the caller's owner (the organization of an organization key, else the user); another
// owner's endpoint is a 404.
import { required } from "@redline/service-kit";
import { defineRoute, type Route } from "../../route-registry.js";
import { answers, endpoint } from "../shared/routes.js";
import { webhookDeliveryToJson, webhookEndpointToJson } from "./mappers.js";
import * as schemas from "./schemas.js";

/** POST /v1/webhooks `{url, events, description?}` → the endpoint with its secret, shown once. */
export const createWebhookRoute = defineRoute({
  ...endpoint("POST /v1/webhooks", "createWebhook", "Create a webhook endpoint", "webhooks"),
  description:
    "Registers an endpoint that receives the chosen events as signed POSTs (Standard Webhooks). The `secret` is in " +
    "this response only. 422 for a URL that is not https or resolves to a private, loopback, link-local or " +
    "unique-local address; 409 (`code: webhook_limit_reached`) past the per-account cap.",
  request: { body: schemas.CreateWebhookSchema },
  ...answers(
    schemas.CreatedWebhookEndpointSchema,
    { status: 201, description: "The new endpoint and its secret, shown once." },
    [403, 409, 503],
  ),
  async handle({ body }, call) {
    const res = await call.ctx.webhooks.createEndpoint(
      { url: body.url, events: body.events, description: body.description ?? "" },
      call.rpc(),
    );
    return { status: 201, body: { ...webhookEndpointToJson(required(res.endpoint, "endpoint")), secret: res.secret } };
  },
});

/** GET /v1/webhooks → `{webhooks}` without secrets. */
export const listWebhooksRoute = defineRoute({
  ...endpoint("GET /v1/webhooks", "listWebhooks", "List webhook endpoints", "webhooks"),
  description: "The caller's endpoints, newest first; never their secrets.",
  ...answers(schemas.WebhookEndpointListSchema, "The endpoints.", [503]),
  async handle(_input, call) {
    const res = await call.ctx.webhooks.listEndpoints({}, call.rpc());
    return { body: { webhooks: res.endpoints.map(webhookEndpointToJson) } };
  },
});

/** GET /v1/webhooks/{webhook_id} → the endpoint without its secret. */
export const getWebhookRoute = defineRoute({
  ...endpoint("GET /v1/webhooks/{webhook_id}", "getWebhook", "Get a webhook endpoint", "webhooks"),
  description: "One of the caller's endpoints, without its secret; unknown or someone else's is a 404.",
  request: { params: schemas.WebhookPathSchema },
  ...answers(schemas.WebhookEndpointSchema, "The endpoint.", [404, 503]),
  async handle({ params }, call) {
    const res = await call.ctx.webhooks.getEndpoint({ id: params.webhook_id }, call.rpc());
    return { body: webhookEndpointToJson(required(res.endpoint, "endpoint")) };
  },
});

/** DELETE /v1/webhooks/{webhook_id}: the endpoint and its delivery log go; nothing more is sent to it. */
export const deleteWebhookRoute = defineRoute({
  ...endpoint("DELETE /v1/webhooks/{webhook_id}", "deleteWebhook", "Delete a webhook endpoint", "webhooks"),
  description:
    "Deletes one of the caller's endpoints with its pending deliveries and log; unknown or someone else's is a 404.",
  request: { params: schemas.WebhookPathSchema },
  ...answers(schemas.WebhookDeletedSchema, "Deleted.", [403, 404, 503]),
  async handle({ params }, call) {
    await call.ctx.webhooks.deleteEndpoint({ id: params.webhook_id }, call.rpc());
    return { body: { id: params.webhook_id, deleted: true as const } };
  },
});

/** GET /v1/webhooks/{webhook_id}/deliveries?limit → `{deliveries}`, newest first. */
export const listWebhookDeliveriesRoute = defineRoute({
  ...endpoint(
    "GET /v1/webhooks/{webhook_id}/deliveries",
    "listWebhookDeliveries",
    "List an endpoint's deliveries",
    "webhooks",
  ),
  description:
    "The delivery log of one of the caller's endpoints, newest first: event, status, attempts, the last " +
    "response code or error and the next attempt's time.",
  request: { params: schemas.WebhookPathSchema, query: schemas.WebhookDeliveriesQuerySchema },
  ...answers(schemas.WebhookDeliveryListSchema, "The deliveries.", [404, 503]),
  async handle({ params, query }, call) {
    const res = await call.ctx.webhooks.listDeliveries(
      { endpointId: params.webhook_id, limit: query.limit },
      call.rpc(),
    );
    return { body: { deliveries: res.deliveries.map(webhookDeliveryToJson) } };
  },
});

/** The webhooks routes, in documentation order (api/index.ts mounts every area's list). */
export const webhooksRoutes: Route[] = [
  createWebhookRoute,
  listWebhooksRoute,
  getWebhookRoute,
  deleteWebhookRoute,
  listWebhookDeliveriesRoute,
];
