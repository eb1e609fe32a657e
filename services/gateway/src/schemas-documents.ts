// The HTTP contract of saved documents, session rosters, saves, doc-events, re-edit, editor
// actions and the memory note (interface-spec endpoints 3 to 18; unshown-parts.md for bodies).
import { z } from "zod";
import {
  apiSchemas,
  INT32_MAX,
  INT64_JSON_MAX,
  MAX_DOCUMENT_CHARS,
  MAX_ID_CHARS,
  MAX_NAME_CHARS,
  queryBool,
  queryInt,
  SESSION_ID_PATTERN,
  UsageSchema,
} from "./schemas.js";
import { issueType } from "./validation.js";

/** Largest serialized JSON of one free-form object (editor action details, page setup), in bytes. */
export const MAX_DETAILS_JSON_BYTES = 4096;

/** A free-form JSON object bounded to MAX_DETAILS_JSON_BYTES once serialized (422 naming the field). */
const boundedRecord = (description: string) =>
  z
    .record(z.string().max(MAX_ID_CHARS), z.unknown())
    .refine((v) => Buffer.byteLength(JSON.stringify(v)) <= MAX_DETAILS_JSON_BYTES, {
      message: `Value error, must serialize to at most ${MAX_DETAILS_JSON_BYTES} bytes of JSON`,
      ...issueType("too_long"),
    })
    .meta({ description: `${description} At most ${MAX_DETAILS_JSON_BYTES} bytes as JSON.` });

const bool = (fallback: boolean, description: string) =>
  z.preprocess(queryBool, z.boolean().default(fallback)).meta({ description });
const sessionId = z.string().max(MAX_ID_CHARS).regex(SESSION_ID_PATTERN);
const documentRef = z
  .string()
  .min(1)
  .max(MAX_ID_CHARS)
  .meta({ description: "Session slot id or durable document UUID." });

// ---------------------------------------------------------------- paths and queries

/** Path of /v1/documents/{document_id}. */
export const DocumentPathSchema = z.object({
  document_id: z.string().min(1).max(256).meta({ description: "Durable document UUID." }),
});

/** Path of /v1/sessions/{session_id}/documents/{document_id}. */
export const SessionDocumentPathSchema = z.object({
  session_id: sessionId.meta({ description: "The session id." }),
  document_id: documentRef,
});

/** Path of the re-edit route. */
export const ChunkPathSchema = z.object({
  session_id: sessionId.meta({ description: "The session id." }),
  chunk_id: z.string().min(1).max(128).meta({ description: "The chunk to resolve." }),
});

/** GET /v1/documents query (endpoint 3). */
export const ListDocumentsQuerySchema = z.object({
  limit: z.preprocess(queryInt, z.number().int().min(1).max(200).default(50)).meta({ description: "1 to 200." }),
  offset: z
    .preprocess(queryInt, z.number().int().min(0).max(INT32_MAX).default(0))
    .meta({ description: "At least 0 (an int32)." }),
  include_preview: bool(false, "Adds preview_html (the first chunks)."),
  archived: bool(false, "Lists archived documents instead of active ones."),
});

/** include_html query. */
export const IncludeHtmlQuerySchema = z.object({ include_html: bool(false, "Adds the HTML.") });

/** GET .../documents query (endpoint 14). */
export const RosterQuerySchema = z.object({
  include_html: bool(false, "Adds each document's HTML."),
  report_changed: bool(false, "Adds changed_since_seen to each entry."),
});

/** DELETE /v1/documents/{id} query (endpoint 7). */
export const ArchiveQuerySchema = z.object({
  force: bool(false, "Archive even when open in other sessions; every session is unlinked and notified."),
  from_session: sessionId.optional().meta({ description: "The caller's own session, left out of the in-use check." }),
});

/** DELETE .../documents/{id} query (endpoint 17). */
export const CloseQuerySchema = z.object({
  next_focus: z.string().max(256).optional().meta({ description: "Slot or durable id to focus next." }),
  include_html: bool(false, "Adds each document's HTML."),
});

/** GET .../doc-events query (endpoint 15). */
export const DocEventsQuerySchema = z.object({
  after_id: z
    .preprocess(queryInt, z.number().int().min(0).max(INT64_JSON_MAX).default(0))
    .meta({ description: "Cursor: events with a greater id." }),
  include_own: bool(false, "Include this session's own writes."),
  limit: z.preprocess(queryInt, z.number().int().min(1).max(500).default(100)).meta({ description: "1 to 500." }),
});

/** DELETE /v1/users/me/cross-session-memory query (endpoint 4). */
export const MemoryQuerySchema = z.object({
  memory_key: z
    .string()
    .max(256)
    .optional()
    .meta({ description: "An end-customer's key; omitted clears the account-level note." }),
});

// ---------------------------------------------------------------- bodies

/** PATCH /v1/documents/{id} (UpdateDocumentRequest); unknown fields are kept so `parts` can be refused with 400. */
export const UpdateDocumentSchema = z
  .looseObject({
    title: z.string().min(1).max(MAX_NAME_CHARS).optional().meta({ description: "New title." }),
    page_setup: boundedRecord("Page setup {size, orientation, margins}; null clears it.").nullable().optional(),
  })
  .meta({ description: "UpdateDocumentRequest. A legacy parts field gives 400 parts_moved_to_chunks." })
  .register(apiSchemas, { id: "UpdateDocumentRequest" });

/** POST .../documents/open (OpenDocumentsRequest). */
export const OpenDocumentsSchema = z
  .object({
    document_ids: z.array(documentRef).min(1).max(50).meta({ description: "Saved documents; the first is focused." }),
  })
  .register(apiSchemas, { id: "OpenDocumentsRequest" });

/** POST /v1/sessions/init (InitSessionRequest). */
export const InitSessionSchema = z
  .object({
    session_id: sessionId.nullish().meta({ description: "Minted by the server when omitted." }),
    document_ids: z
      .array(documentRef)
      .max(50)
      .nullish()
      .meta({ description: "Documents to open; none gives an empty session." }),
  })
  .register(apiSchemas, { id: "InitSessionRequest" });

/** One editor action (font, colour, alignment change). */
export const EditorActionInputSchema = z
  .object({
    action: z.string().min(1).max(64).meta({ description: "font, color, alignment (others stored as sent)." }),
    value: z
      .string()
      .max(1000)
      .default("")
      .meta({ description: "Font family or size, colour, left/center/right/justify." }),
    document_id: z.string().max(MAX_ID_CHARS).nullish().meta({ description: "Slot or durable id of the document." }),
    chunk_ids: z
      .array(z.string().max(128))
      .max(1000)
      .default([])
      .meta({ description: "Chunks the action applied to." }),
    details: boundedRecord("Extra attributes.").nullish(),
  })
  .register(apiSchemas, { id: "EditorActionInput" });

/** POST .../save and the optional body of 12 (SaveDocumentRequest). */
export const SaveDocumentSchema = z
  .object({
    html: z.string().max(MAX_DOCUMENT_CHARS).meta({ description: "The edited HTML (chunk ids kept)." }),
    base_version_id: z
      .string()
      .max(64)
      .nullish()
      .meta({ description: "The version the edit started from; default the session's last-seen version." }),
    editor_actions: z
      .array(EditorActionInputSchema)
      .max(500)
      .nullish()
      .meta({ description: "Editor actions to record with the save." }),
  })
  .register(apiSchemas, { id: "SaveDocumentRequest" });

/** POST .../editor-actions. */
export const RecordEditorActionsSchema = z
  .object({ actions: z.array(EditorActionInputSchema).min(1).max(500) })
  .register(apiSchemas, { id: "RecordEditorActionsRequest" });

/** POST .../chunks/{chunk_id}/re-edit (ReEditChunkRequest). */
export const ReEditChunkSchema = z
  .object({
    mode: z
      .enum(["redo", "merge"])
      .meta({ description: "redo re-applies the AI's change on the user's text; merge blends both." }),
    document_id: documentRef.nullish(),
    instruction: z.string().max(10_000).nullish().meta({ description: "Extra guidance for the model." }),
  })
  .register(apiSchemas, { id: "ReEditChunkRequest" });

// ---------------------------------------------------------------- responses

/** A Files entry (metadata only). */
export const DocumentSummarySchema = z
  .object({
    document_id: z.string().meta({ description: "Durable UUID." }),
    durable_document_id: z.string(),
    title: z.string(),
    version_id: z.string(),
    chunk_count: z.number().int(),
    section_count: z.number().int(),
    archived: z.boolean(),
    status: z.enum(["active", "archived"]),
    created_at: z.string().nullable(),
    updated_at: z.string().nullable(),
    session_count: z.number().int().meta({ description: "Sessions that have it open." }),
    preview_html: z.string().optional().meta({ description: "Only with include_preview=true." }),
  })
  .register(apiSchemas, { id: "DocumentSummary" });

/** GET /v1/documents 200. */
export const DocumentListResponseSchema = z
  .object({
    documents: z.array(DocumentSummarySchema),
    total: z.number().int().meta({ description: "Matching documents over all pages." }),
    limit: z.number().int(),
    offset: z.number().int(),
    imported: z.number().int().meta({
      description:
        "Documents of earlier chats imported by this call (always 0: chats store documents as they load them).",
    }),
  })
  .register(apiSchemas, { id: "DocumentListResponse" });

/** A chat session that has the document open. */
export const PriorChatSchema = z.object({
  session_id: z.string(),
  title: z.string(),
  document_id: z.string().meta({ description: "The slot id in that session." }),
  last_updated: z.string().nullable(),
});

/** GET /v1/documents/{id} 200. */
export const DocumentDetailSchema = DocumentSummarySchema.extend({
  structure: z.object({
    headings: z.array(
      z.object({ level: z.number().int(), text: z.string(), position: z.number().int(), chunk_id: z.string() }),
    ),
    section_count: z.number().int(),
    block_count: z.number().int(),
    media: z.object({ images: z.number().int(), diagrams: z.number().int() }),
  }),
  prior_chats: z.array(PriorChatSchema),
  html: z.string().optional(),
  page_setup: z.record(z.string(), z.unknown()).nullable().optional(),
}).register(apiSchemas, { id: "DocumentDetail" });

/** PATCH 200. */
export const UpdateDocumentResponseSchema = z
  .object({
    status: z.enum(["renamed", "updated"]).meta({ description: "renamed for a title-only call." }),
    document: DocumentSummarySchema,
  })
  .register(apiSchemas, { id: "UpdateDocumentResponse" });

/** Archive 200. */
export const ArchiveResponseSchema = z
  .object({
    document_id: z.string(),
    status: z.literal("archived"),
    archived: z.literal(true),
    already_archived: z.boolean(),
    unlinked_sessions: z.number().int().meta({ description: "Sessions the document was closed in (and notified)." }),
  })
  .register(apiSchemas, { id: "ArchiveResponse" });

/** Unarchive 200 (endpoint 8). */
export const UnarchiveResponseSchema = z
  .object({
    document_id: z.string(),
    status: z.literal("active"),
    unarchived: z.boolean().meta({ description: "False when it was already active or is unknown (a no-op)." }),
  })
  .register(apiSchemas, { id: "UnarchiveResponse" });

/** A roster entry. */
export const RosterEntrySchema = z
  .object({
    document_id: z.string().meta({ description: "Session-local slot id." }),
    durable_document_id: z.string().nullable().meta({ description: "Permanent UUID; null until first save." }),
    title: z.string(),
    chunk_count: z.number().int(),
    section_count: z.number().int(),
    focused: z.boolean(),
    page_setup: z.record(z.string(), z.unknown()).nullable(),
    version_id: z.string().nullable(),
    archived: z.boolean(),
    html: z.string().optional(),
    changed_since_seen: z.boolean().optional(),
  })
  .register(apiSchemas, { id: "SessionRosterEntry" });

/** Roster responses (endpoints 9, 10, 13, 14, 16, 17, 12). */
export const RosterResponseSchema = z
  .object({
    session_id: z.string(),
    created: z.boolean().optional(),
    documents: z.array(RosterEntrySchema).meta({ description: "Focused first." }),
    focused_document_id: z.string().nullable(),
    document: RosterEntrySchema.optional().meta({ description: "The document the call was about." }),
    html: z.string().nullable().optional().meta({ description: "HTML of the focused document (focus, close)." }),
    closed_document_id: z.string().optional(),
    unarchived: z.boolean().optional(),
  })
  .register(apiSchemas, { id: "RosterResponse" });

/** Save 200. */
export const SaveResponseSchema = z
  .object({
    session_id: z.string(),
    document_id: z.string(),
    durable_document_id: z.string(),
    version_id: z.string(),
    changed_chunk_ids: z.array(z.string()),
    merged: z.boolean().meta({ description: "True when other sessions' commits were merged in." }),
    html: z.string().meta({ description: "The document at the new head." }),
    created: z.boolean().meta({ description: "True when this save created the document (a blank tab's first save)." }),
  })
  .register(apiSchemas, { id: "SaveDocumentResponse" });

/** 409 chunk_conflict. */
export const ChunkConflictSchema = z
  .object({
    detail: z.string(),
    code: z.literal("chunk_conflict"),
    chunk_ids: z.array(z.string()),
    head_version_id: z.string(),
    conflicts: z.array(z.object({ conflict_id: z.string(), chunk_id: z.string() })),
    conflict_count: z.number().int().meta({ description: "All conflicts recorded; at most 200 are listed." }),
    truncated: z.boolean().meta({ description: "True when chunk_ids or conflicts list only the first 200." }),
    suggested_action: z.string(),
  })
  .register(apiSchemas, { id: "ChunkConflictError" });

/** 409 document_in_use. */
export const DocumentInUseSchema = z
  .object({
    detail: z.string(),
    code: z.literal("document_in_use"),
    open_in_sessions: z.number().int(),
    suggested_action: z.string(),
  })
  .register(apiSchemas, { id: "DocumentInUseError" });

/** One doc-event. */
export const DocEventSchema = z
  .object({
    id: z.number().int(),
    type: z.literal("document_updated"),
    document_id: z.string().meta({ description: "Durable id." }),
    slot_document_id: z
      .string()
      .nullable()
      .meta({ description: "This session's slot id for it; null when no longer open." }),
    version_id: z.string(),
    session_id: z.string().nullable().meta({ description: "The committing session." }),
    change: z.string().meta({ description: "edit, save, replace, re-edit, metadata, archived or unarchived." }),
    chunk_ids: z.array(z.string()).optional(),
    title: z.string().optional(),
    created_at: z.string().nullable(),
  })
  .register(apiSchemas, { id: "DocEvent" });

/** GET doc-events 200. */
export const DocEventsResponseSchema = z
  .object({
    session_id: z.string(),
    events: z.array(DocEventSchema),
    last_id: z.number().int().meta({ description: "The next after_id." }),
    has_more: z.boolean(),
  })
  .register(apiSchemas, { id: "DocEventsResponse" });

/** Re-edit 200. */
export const ReEditChunkResponseSchema = z
  .object({
    chunk_id: z.string(),
    html: z.string().meta({ description: "The rewritten section HTML." }),
    version_id: z.string(),
    usage: UsageSchema,
  })
  .register(apiSchemas, { id: "ReEditChunkResponse" });

/** An editor action as stored. */
export const EditorActionSchema = z
  .object({
    id: z.string(),
    action: z.string(),
    value: z.string(),
    document_id: z.string().nullable(),
    chunk_ids: z.array(z.string()),
    details: z.record(z.string(), z.unknown()).nullable(),
    timestamp: z.string().nullable(),
  })
  .register(apiSchemas, { id: "EditorAction" });

/** POST editor-actions 200. */
export const EditorActionsResponseSchema = z
  .object({ session_id: z.string(), actions: z.array(EditorActionSchema) })
  .register(apiSchemas, { id: "EditorActionsResponse" });

/** DELETE memory 200. */
export const ClearMemoryResponseSchema = z
  .object({ removed: z.number().int(), memory_key: z.string().nullable() })
  .register(apiSchemas, { id: "ClearMemoryResponse" });

/** The optional body of the session unarchive (endpoint 12): a SaveDocumentRequest, or nothing. */
export const UnarchiveBodySchema = SaveDocumentSchema.partial().optional().meta({
  description: "Optional SaveDocumentRequest: with html, the edits are saved on top of the restored document.",
});
