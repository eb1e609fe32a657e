// Outbound webhooks (docs/api.md, Webhooks): an account's endpoints, each signed with its own
// secret (shown once), and the log of deliveries made to them.
import { WEBHOOK_EVENT_TYPES, WEBHOOK_LIMITS } from "@redline/event-contracts";
import { z } from "zod";
import { component, MAX_ID_CHARS } from "../shared/schemas.js";

const eventType = z.enum(WEBHOOK_EVENT_TYPES).meta({ description: "An event type." });

/** POST /v1/webhooks body. */
export const CreateWebhookSchema = component("CreateWebhookRequest", {
  url: z
    .string()
    .min(1)
    .max(WEBHOOK_LIMITS.urlChars)
    .meta({
      description:
        "Where deliveries are POSTed: https, to a host resolving to public addresses only (http and private " +
        "addresses only when the deployment sets WEBHOOK_ALLOW_PRIVATE=1).",
    }),
  events: z
    .array(eventType)
    .min(1)
    .max(WEBHOOK_EVENT_TYPES.length * 2)
    .meta({
      description: "The event types to deliver: job.completed, job.failed, job.awaiting_approval, document.updated.",
    }),
  description: z
    .string()
    .max(WEBHOOK_LIMITS.descriptionChars)
    .nullish()
    .meta({ description: "A label to recognise the endpoint by (at most 200 characters)." }),
});

const endpointFields = {
  id: z.string().meta({ description: "The endpoint's id (wh_…)." }),
  url: z.string().meta({ description: "The target URL." }),
  events: z.array(eventType).meta({ description: "Subscribed event types." }),
  description: z.string().optional().meta({ description: "The endpoint's label; left out when it has none." }),
  created_at: z.string().meta({ format: "date-time", description: "When the endpoint was created." }),
};

/** An endpoint as listings show it: never its secret. */
export const WebhookEndpointSchema = component("WebhookEndpoint", endpointFields);

export type WebhookEndpointJson = z.output<typeof WebhookEndpointSchema>;

/** An endpoint just created: with its signing secret, shown this once. */
export const CreatedWebhookEndpointSchema = component("CreatedWebhookEndpoint", {
  ...endpointFields,
  secret: z.string().meta({
    description:
      "The signing secret (whsec_ + base64), for verifying webhook-signature. Shown only in this response: store it now.",
  }),
});

/** GET /v1/webhooks response. */
export const WebhookEndpointListSchema = component("WebhookEndpointList", {
  webhooks: z.array(WebhookEndpointSchema).meta({ description: "The caller's endpoints, newest first." }),
});

/** DELETE /v1/webhooks/{webhook_id} response. */
export const WebhookDeletedSchema = component("WebhookDeleted", {
  id: z.string().meta({ description: "The deleted endpoint's id." }),
  deleted: z.literal(true),
});

/** One delivery of the log. */
export const WebhookDeliverySchema = component("WebhookDelivery", {
  id: z.string().meta({ description: "The delivery id: the webhook-id header of every attempt (msg_…)." }),
  event: eventType,
  status: z.enum(["pending", "delivered", "failed"]).meta({
    description:
      "pending (waiting for its next attempt), delivered (a 2xx arrived) or failed (retries ran out after 24 h).",
  }),
  attempts: z.number().int().meta({ description: "Attempts made so far." }),
  last_response_code: z
    .number()
    .int()
    .optional()
    .meta({ description: "HTTP status of the last attempt; left out when none answered." }),
  last_error: z.string().optional().meta({
    description: "Why the last attempt failed (a status, a timeout, a refused address); left out when it did not.",
  }),
  next_attempt_at: z
    .string()
    .optional()
    .meta({ format: "date-time", description: "When the next attempt is due; left out once delivered or failed." }),
  created_at: z.string().meta({ format: "date-time", description: "When the event was enqueued." }),
  delivered_at: z
    .string()
    .optional()
    .meta({ format: "date-time", description: "When a 2xx arrived; left out until then." }),
});

export type WebhookDeliveryJson = z.output<typeof WebhookDeliverySchema>;

/** GET /v1/webhooks/{webhook_id}/deliveries response. */
export const WebhookDeliveryListSchema = component("WebhookDeliveryList", {
  deliveries: z.array(WebhookDeliverySchema).meta({ description: "Newest first." }),
});

/** Query of the delivery log. */
export const WebhookDeliveriesQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50).meta({ description: "At most this many (1..200)." }),
});

/** Path of /v1/webhooks/{webhook_id}. */
export const WebhookPathSchema = z.object({
  webhook_id: z.string().min(1).max(MAX_ID_CHARS).meta({ description: "The endpoint's id." }),
});
