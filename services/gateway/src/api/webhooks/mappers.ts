// webhooks.v1 messages → the WebhookEndpoint and WebhookDelivery JSON.
import type { webhooksV1 } from "@redline/grpc-stubs";
import { required } from "@redline/service-kit";
import { iso } from "../shared/mappers.js";
import type { WebhookDeliveryJson, WebhookEndpointJson } from "./schemas.js";

/** An endpoint without its secret; description left out when empty. */
export function webhookEndpointToJson(e: webhooksV1.WebhookEndpoint): WebhookEndpointJson {
  return {
    id: e.id,
    url: e.url,
    events: e.events as WebhookEndpointJson["events"],
    ...(e.description && { description: e.description }),
    created_at: required(iso(e.createdAt), "created_at"),
  };
}

/** A delivery; the fields with no value are left out. */
export function webhookDeliveryToJson(d: webhooksV1.WebhookDelivery): WebhookDeliveryJson {
  const next = iso(d.nextAttemptAt);
  const delivered = iso(d.deliveredAt);
  return {
    id: d.id,
    event: d.event as WebhookDeliveryJson["event"],
    status: d.status as WebhookDeliveryJson["status"],
    attempts: d.attempts,
    ...(d.lastResponseCode > 0 && { last_response_code: d.lastResponseCode }),
    ...(d.lastError && { last_error: d.lastError }),
    ...(next && { next_attempt_at: next }),
    created_at: required(iso(d.createdAt), "created_at"),
    ...(delivered && { delivered_at: delivered }),
  };
}
