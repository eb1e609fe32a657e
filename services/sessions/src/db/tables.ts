// Row types and table names of the sessions schema (snake_case, as stored).
import { SCHEMA } from "./migrations.js";

/** Qualified table names. */
export const T = {
  sessions: `${SCHEMA}.sessions`,
  roster: `${SCHEMA}.roster`,
  messages: `${SCHEMA}.messages`,
  memory: `${SCHEMA}.memory_notes`,
  actions: `${SCHEMA}.editor_actions`,
  reverts: `${SCHEMA}.reverts`,
  webhookEndpoints: `${SCHEMA}.webhook_endpoints`,
  webhookDeliveries: `${SCHEMA}.webhook_deliveries`,
  webhookAttempts: `${SCHEMA}.webhook_attempts`,
} as const;

export interface SessionRow {
  id: string;
  owner_id: string;
  title: string;
  next_turn_index: number;
  created_at: Date;
  updated_at: Date;
}

/** One roster slot: a document open in a session. */
export interface RosterRow {
  /** With session_id, names the session (ids are scoped per owner). */
  owner_id?: string;
  session_id: string;
  slot_id: string;
  /** Durable document id; null for a blank tab not yet saved. */
  document_id: string | null;
  title: string;
  focused: boolean;
  position: number;
  last_seen_version_id: string;
  opened_at: Date;
  closed_at: Date | null;
  /** "closed" by the user or "archived" (unlinked by an archive); null while open. */
  closed_reason?: string | null;
}

export interface MessageRow {
  id: string;
  owner_id?: string;
  session_id: string;
  turn_index: number;
  sender: "user" | "ai";
  content: string;
  checkpoint_id: string;
  active: boolean;
  created_at: Date;
}

/** An editor action (font, colour, alignment change) recorded by a session. */
export interface EditorActionRow {
  id: string;
  owner_id?: string;
  session_id: string;
  action: string;
  value: string;
  document_id: string;
  chunk_ids: string[];
  details: Record<string, unknown> | null;
  created_at: Date;
}

/** A cross-session memory note; memory_key "" is the account-level note. */
export interface MemoryNoteRow {
  owner_id: string;
  memory_key: string;
  note: string;
  updated_at: Date;
}

/** A document a revert restored. */
export interface RestoredDoc {
  document_id: string;
  from_version_id: string;
  to_version_id: string;
}

/** A stored revert (its id is the redo_checkpoint_id). */
export interface RevertRow {
  id: string;
  owner_id: string;
  session_id: string;
  turn_index: number;
  message_ids: string[];
  closed_slot_ids: string[];
  restored: RestoredDoc[];
  created_at: Date;
  undone_at: Date | null;
}

/** One open slot of a document in one of the owner's sessions (a join of roster and sessions). */
export interface HolderRow {
  document_id: string;
  session_id: string;
  session_title: string;
  slot_id: string;
  updated_at: Date;
}

/** A webhook endpoint of an account. */
export interface WebhookEndpointRow {
  id: string;
  owner_id: string;
  url: string;
  /** Subscribed event types (event-contracts WEBHOOK_EVENT_TYPES). */
  events: string[];
  description: string;
  /** whsec_ + base64 of the HMAC key. */
  secret: string;
  created_at: Date;
}

/** Where a delivery stands: pending (due or waiting for its next attempt), delivered or failed. */
export type WebhookDeliveryStatus = "pending" | "delivered" | "failed";

/** One event to deliver to one endpoint (the webhooks outbox). */
export interface WebhookDeliveryRow {
  /** msg_…: the webhook-id of every attempt. */
  id: string;
  endpoint_id: string;
  owner_id: string;
  /** The event's JetStream message id; unique per endpoint. */
  event_id: string;
  event_type: string;
  /** The JSON body POSTed: {type, timestamp, data}. */
  body: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  last_response_code: number | null;
  last_error: string | null;
  next_attempt_at: Date;
  lease_expires_at: Date | null;
  created_at: Date;
  delivered_at: Date | null;
}
