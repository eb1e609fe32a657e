// Webhook endpoints of an account and their delivery log (docs/api.md, Webhooks): create with
// URL and event checks under the per-account cap, list, get, delete, deliveries. The secret is
// returned by create only.

import { randomBytes } from "node:crypto";
import { WEBHOOK_EVENT_TYPES, WEBHOOK_LIMITS } from "@redline/event-contracts";
import { ConflictError, type Knex, NotFoundError, SchemaError } from "@redline/service-kit";
import type { WebhooksConfig } from "../config.js";
import {
  countEndpoints,
  deleteEndpoint as deleteRow,
  listDeliveries as deliveriesOf,
  listEndpoints as endpointsOf,
  findEndpoint,
  insertEndpoint,
  lockOwnerEndpoints,
} from "../db/store/webhooks.js";
import type { WebhookDeliveryRow, WebhookEndpointRow } from "../db/tables.js";
import { checkUrlForm, RefusedTargetError, resolveTarget } from "../webhooks/address-guard.js";

/** Deliveries a page holds by default and at most. */
const DELIVERIES_PAGE = { default: 50, max: 200 };

/** What create needs: the URL, the events and an optional label. */
export interface NewEndpoint {
  url: string;
  events: string[];
  description: string;
}

const newEndpointId = () => `wh_${randomBytes(12).toString("hex")}`;
/** A Standard Webhooks secret: whsec_ + base64 of 32 random bytes (the HMAC-SHA256 key). */
const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`;

/** The 422 of one body field (interface-spec, Errors: `{type, loc, msg}`). */
function invalid(loc: (string | number)[], msg: string): SchemaError {
  return new SchemaError([{ type: "value_error", loc: ["body", ...loc], msg }]);
}

/** The events, each from WEBHOOK_EVENT_TYPES, at least one, duplicates dropped; SchemaError otherwise. */
function checkEvents(events: string[]): string[] {
  if (events.length === 0) throw invalid(["events"], "at least one event type is required");
  events.forEach((e, i) => {
    if (!(WEBHOOK_EVENT_TYPES as readonly string[]).includes(e))
      throw invalid(["events", i], `unknown event type; expected one of ${WEBHOOK_EVENT_TYPES.join(", ")}`);
  });
  return [...new Set(events)];
}

/**
 * Registers an endpoint for `ownerId` and returns it with its secret (shown this once).
 * SchemaError (422) for a URL that is not https, carries credentials, does not resolve or
 * resolves to a private, loopback, link-local, unique-local or CGNAT address (both lifted by
 * `cfg.allowPrivate`), for unknown events or a long description; ConflictError (409,
 * `code: "webhook_limit_reached"`) past `cfg.maxEndpoints`.
 */
export async function createEndpoint(
  db: Knex,
  cfg: Pick<WebhooksConfig, "allowPrivate" | "maxEndpoints">,
  ownerId: string,
  input: NewEndpoint,
): Promise<WebhookEndpointRow> {
  const events = checkEvents(input.events);
  if (input.description.length > WEBHOOK_LIMITS.descriptionChars)
    throw invalid(["description"], `at most ${WEBHOOK_LIMITS.descriptionChars} characters`);
  try {
    await resolveTarget(checkUrlForm(input.url, cfg.allowPrivate), cfg.allowPrivate);
  } catch (err) {
    if (err instanceof RefusedTargetError) throw invalid(["url"], err.message);
    throw err;
  }
  return db.transaction(async (trx) => {
    await lockOwnerEndpoints(trx, ownerId);
    if ((await countEndpoints(trx, ownerId)) >= cfg.maxEndpoints)
      throw new ConflictError(`An account may have at most ${cfg.maxEndpoints} webhook endpoints`, {
        code: "webhook_limit_reached",
      });
    return insertEndpoint(trx, {
      id: newEndpointId(),
      owner_id: ownerId,
      url: input.url,
      events,
      description: input.description,
      secret: newSecret(),
    });
  });
}

/** The owner's endpoints, newest first. */
export function listEndpoints(db: Knex, ownerId: string): Promise<WebhookEndpointRow[]> {
  return endpointsOf(db, ownerId);
}

/** The owner's endpoint; NotFoundError for unknown and foreign ids alike. */
export async function getEndpoint(db: Knex, ownerId: string, id: string): Promise<WebhookEndpointRow> {
  const row = await findEndpoint(db, ownerId, id);
  if (!row) throw new NotFoundError("Webhook endpoint not found");
  return row;
}

/** Deletes the owner's endpoint and its delivery log; NotFoundError when there is none. */
export async function deleteEndpoint(db: Knex, ownerId: string, id: string): Promise<void> {
  if (!(await deleteRow(db, ownerId, id))) throw new NotFoundError("Webhook endpoint not found");
}

/** The endpoint's deliveries, newest first, `limit` 1..200 (0: 50); NotFoundError for another's endpoint. */
export async function listDeliveries(
  db: Knex,
  ownerId: string,
  endpointId: string,
  limit: number,
): Promise<WebhookDeliveryRow[]> {
  await getEndpoint(db, ownerId, endpointId);
  const n = limit > 0 ? Math.min(limit, DELIVERIES_PAGE.max) : DELIVERIES_PAGE.default;
  return deliveriesOf(db, ownerId, endpointId, n);
}
