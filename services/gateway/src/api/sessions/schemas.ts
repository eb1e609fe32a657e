// Sessions (interface-spec endpoints 2, 4 and 19): the session list, a session's history and
// document state, and clearing the cross-session memory note.
import { z } from "zod";
import {
  clampedPageLimit,
  component,
  deprecatedUserId,
  MAX_ID_CHARS,
  pageOffset,
  queryFlag,
} from "../shared/schemas.js";

/** GET /v1/sessions query. */
export const ListSessionsQuerySchema = z.object({
  limit: clampedPageLimit(50).meta({ description: "Page size, 1 to 200 (larger values are clamped to 200)." }),
  offset: pageOffset,
  user_id: deprecatedUserId(false),
});

/** GET /v1/sessions/{session_id}/history query. */
export const HistoryQuerySchema = z.object({
  focus_document_id: z
    .string()
    .max(MAX_ID_CHARS)
    .optional()
    .meta({ description: "Durable (or slot) id of the document to restore when it is open in the session." }),
  include_document_html: queryFlag(true, "false omits document_state.html_content."),
});

/** One entry of GET /v1/sessions. */
export const SessionSummarySchema = component("SessionSummary", {
  session_id: z.string(),
  title: z.string(),
  created_at: z.string().optional().meta({ description: "ISO 8601." }),
  last_updated: z.string().optional().meta({ description: "ISO 8601 time of the last activity." }),
  message_count: z.number().int(),
  document_count: z.number().int(),
});

export type SessionSummaryJson = z.output<typeof SessionSummarySchema>;

/** GET /v1/sessions 200. */
export const SessionListResponseSchema = component("SessionListResponse", {
  sessions: z.array(SessionSummarySchema).meta({ description: "Most recent activity first." }),
  total: z.number().int().meta({ description: "Number of sessions returned." }),
});

export type SessionListResponseJson = z.output<typeof SessionListResponseSchema>;

/** A history message (unshown-parts.md, Revert). */
export const HistoryMessageSchema = component("HistoryMessage", {
  id: z.string(),
  sender: z.enum(["user", "ai"]),
  content: z.string(),
  timestamp: z.string().optional().meta({ description: "ISO 8601." }),
  turn_index: z.number().int().meta({ description: "From 0; a user message and its reply share it." }),
  checkpoint_id: z.string().optional().meta({ description: "Restore point of the turn; left out when none." }),
});

export type HistoryMessageJson = z.output<typeof HistoryMessageSchema>;

/** document_state of the history response. */
export const DocumentStateSchema = component("DocumentState", {
  document_id: z.string().meta({ description: "Session-local slot id." }),
  durable_document_id: z.string().optional().meta({ description: "Permanent UUID; left out until first save." }),
  title: z.string(),
  html_content: z
    .string()
    .optional()
    .meta({ description: "The HTML with chunk ids kept; omitted when include_document_html=false." }),
  version_id: z.string().optional(),
  chunk_count: z.number().int(),
  last_modified: z.string().optional().meta({ description: "ISO 8601." }),
  attachments: z.array(z.record(z.string(), z.unknown())),
});

export type DocumentStateJson = z.output<typeof DocumentStateSchema>;

/** GET /v1/sessions/{session_id}/history 200. */
export const HistoryResponseSchema = component("HistoryResponse", {
  session_id: z.string(),
  messages: z.array(HistoryMessageSchema),
  document_state: DocumentStateSchema.nullable(),
  attachments: z.array(z.record(z.string(), z.unknown())),
  editor_actions: z.array(z.record(z.string(), z.unknown())),
  editor_action: z.enum(["update", "clear"]).meta({ description: "clear when the session holds no document." }),
});

export type HistoryResponseJson = z.output<typeof HistoryResponseSchema>;

/** DELETE /v1/users/me/cross-session-memory query (endpoint 4). */
export const MemoryQuerySchema = z.object({
  memory_key: z
    .string()
    .max(256)
    .optional()
    .meta({ description: "An end-customer's key; omitted clears the account-level note." }),
});

/** DELETE memory 200. */
export const ClearMemoryResponseSchema = component("ClearMemoryResponse", {
  removed: z.number().int(),
  memory_key: z
    .string()
    .optional()
    .meta({ description: "The cleared end-customer note; left out for the account note." }),
});
