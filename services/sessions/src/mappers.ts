// Rows and command results → proto messages, and the few proto inputs several RPCs share.
import type { sessionsCheckpointsV1, sessionsV1, sessionsWorkspaceV1, webhooksV1 } from "@redline/grpc-stubs";
import type { EditorActionInput } from "./commands/editor-actions.js";
import type { SessionView } from "./commands/sessions.js";
import type {
  EditorActionRow,
  HolderRow,
  MessageRow,
  RestoredDoc,
  RevertRow,
  RosterRow,
  WebhookDeliveryRow,
  WebhookEndpointRow,
} from "./db/tables.js";

/** A roster slot; `documentId` is the slot id, `durableDocumentId` "" for a blank tab. */
export function rosterEntry(r: RosterRow): sessionsV1.RosterEntry {
  return {
    documentId: r.slot_id,
    durableDocumentId: r.document_id ?? "",
    title: r.title,
    focused: r.focused,
    lastSeenVersionId: r.last_seen_version_id,
    openedAt: r.opened_at,
  };
}

/** A session; an untitled one is named after its focused document. */
export function sessionMessage(v: SessionView): sessionsV1.Session {
  const focused = v.roster.find((r) => r.focused);
  return {
    sessionId: v.row.id,
    createdAt: v.row.created_at,
    updatedAt: v.row.updated_at,
    messageCount: v.messageCount,
    title: v.row.title || focused?.title || "",
    roster: v.roster.map(rosterEntry),
  };
}

/** One message of the history. */
export function chatMessage(m: MessageRow): sessionsV1.Message {
  return {
    id: m.id,
    sender: m.sender,
    content: m.content,
    timestamp: m.created_at,
    turnIndex: m.turn_index,
    checkpointId: m.checkpoint_id,
  };
}

/** A stored editor action; details (a jsonb object) as a Struct, absent when none. */
export function editorAction(r: EditorActionRow): sessionsWorkspaceV1.EditorAction {
  return {
    id: String(r.id),
    action: r.action,
    value: r.value,
    documentId: r.document_id,
    chunkIds: r.chunk_ids,
    details: r.details ?? undefined,
    createdAt: r.created_at,
  };
}

/** A session holding a document open. */
export function documentHolder(h: HolderRow): sessionsWorkspaceV1.DocumentHolder {
  return {
    durableDocumentId: h.document_id,
    sessionId: h.session_id,
    sessionTitle: h.session_title,
    slotId: h.slot_id,
    updatedAt: h.updated_at,
  };
}

/** A stored revert. */
export function revertMessage(row: RevertRow): sessionsCheckpointsV1.RevertRecord {
  return {
    redoCheckpointId: row.id,
    turnIndex: row.turn_index,
    restored: row.restored.map((r) => ({
      documentId: r.document_id,
      fromVersionId: r.from_version_id,
      toVersionId: r.to_version_id,
    })),
    closedSlotIds: row.closed_slot_ids,
    undone: row.undone_at !== null,
    createdAt: row.created_at,
  };
}

/** Restored documents of an ApplyRevert request. */
export function restoredFromProto(rs: sessionsCheckpointsV1.RestoredDocument[]): RestoredDoc[] {
  return rs.map((r) => ({ document_id: r.documentId, from_version_id: r.fromVersionId, to_version_id: r.toVersionId }));
}

/** Editor actions to record; `defaultDocumentId` fills an empty document_id. */
export function editorActionsFromProto(
  actions: sessionsWorkspaceV1.EditorAction[],
  defaultDocumentId = "",
): EditorActionInput[] {
  return actions.map((a) => ({
    action: a.action,
    value: a.value,
    documentId: a.documentId || defaultDocumentId,
    chunkIds: a.chunkIds,
    details: a.details ?? null,
  }));
}

/** A webhook endpoint without its secret. */
export function webhookEndpointMessage(r: WebhookEndpointRow): webhooksV1.WebhookEndpoint {
  return { id: r.id, url: r.url, events: r.events, description: r.description, createdAt: r.created_at };
}

/** A delivery of the log: next_attempt_at only while pending, delivered_at once delivered. */
export function webhookDeliveryMessage(r: WebhookDeliveryRow): webhooksV1.WebhookDelivery {
  return {
    id: r.id,
    event: r.event_type,
    status: r.status,
    attempts: r.attempts,
    lastResponseCode: r.last_response_code ?? 0,
    lastError: r.last_error ?? "",
    nextAttemptAt: r.status === "pending" ? r.next_attempt_at : undefined,
    createdAt: r.created_at,
    deliveredAt: r.delivered_at ?? undefined,
  };
}
