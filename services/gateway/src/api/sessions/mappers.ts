// Sessions proto → JSON: session summaries, history messages and the focused document's state.
import type { documentsV1, sessionsV1 } from "@redline/grpc-stubs";
import { chunksToHtml, iso } from "../shared/mappers.js";
import type { DocumentStateJson, HistoryMessageJson, SessionSummaryJson } from "./schemas.js";

/** One GET /v1/sessions entry; `document_count` is the roster size. */
export function sessionSummaryToJson(session: sessionsV1.Session): SessionSummaryJson {
  return {
    session_id: session.sessionId,
    title: session.title,
    created_at: iso(session.createdAt),
    last_updated: iso(session.updatedAt ?? session.createdAt),
    message_count: session.messageCount,
    document_count: session.roster.length,
  };
}

/** One history message; an empty checkpoint id is left out. */
export function historyMessageToJson(message: sessionsV1.Message): HistoryMessageJson {
  return {
    id: message.id,
    sender: message.sender === "user" ? "user" : "ai",
    content: message.content,
    timestamp: iso(message.timestamp),
    turn_index: message.turnIndex,
    checkpoint_id: message.checkpointId || undefined,
  };
}

/**
 * The roster entry a history restore shows: the entry whose durable (or slot) id is
 * `focusDocumentId` when it is open in the session, else the focused entry, else the first.
 */
export function pickRosterEntry(
  roster: sessionsV1.RosterEntry[],
  focusDocumentId: string | undefined,
): sessionsV1.RosterEntry | undefined {
  if (focusDocumentId) {
    const asked =
      roster.find((e) => e.durableDocumentId === focusDocumentId) ??
      roster.find((e) => e.documentId === focusDocumentId);
    if (asked) return asked;
  }
  return roster.find((e) => e.focused) ?? roster[0];
}

/**
 * `document_state` of the history response for a roster entry and, when it has been saved, the
 * document read at head with chunks. A blank tab (no durable id yet) reads as empty content.
 */
export function documentStateToJson(
  entry: sessionsV1.RosterEntry,
  doc: documentsV1.GetDocumentResponse | undefined,
  includeHtml: boolean,
  attachments: Record<string, unknown>[] = [],
): DocumentStateJson {
  const meta = doc?.document;
  return {
    document_id: entry.documentId,
    durable_document_id: entry.durableDocumentId || undefined,
    title: meta?.title || entry.title,
    ...(includeHtml && { html_content: doc ? chunksToHtml(doc.chunks) : "" }),
    version_id: meta?.versionId || entry.lastSeenVersionId || undefined,
    chunk_count: meta?.chunkCount ?? 0,
    last_modified: iso(meta?.updatedAt ?? entry.openedAt),
    attachments,
  };
}
