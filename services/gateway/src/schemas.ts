// The HTTP contract as zod 4 schemas: the same objects validate requests and generate
// /openapi.json (request schemas), and type the mappers' output (response schemas).
// Shapes: interface-spec.md endpoints 1, 2 and 19; unshown-parts.md for the "not shown" parts.
import { z } from "zod";
import { issueType } from "./validation.js";

/**
 * Named component schemas of the OpenAPI document (`#/components/schemas/<id>`). Descriptions
 * live in zod's global metadata (`.meta()`), which z.toJSONSchema reads for every schema.
 */
export const apiSchemas = z.registry<{ id: string }>();

/** Session ids chosen by callers: letters, digits, `_`, `-`, `.`; at most 256 (Limits). */
export const SESSION_ID_PATTERN = /^[a-zA-Z0-9_\-.]+$/;
/** Longest chat message, in characters. */
export const MAX_MESSAGE_CHARS = 100_000;
/** Most images per chat request. */
export const MAX_IMAGE_ATTACHMENTS = 20;

// Bounds of every request field (query, path, body), so that a value is refused with a 422
// before any write instead of failing in a service or column after the turn was billed.
/** Longest id of any kind (session, document, job, memory key...), as the spec's session_id. */
export const MAX_ID_CHARS = 256;
/** Longest name, title or file name. */
export const MAX_NAME_CHARS = 512;
/** Longest short free text (a selection, feedback, an instruction). */
export const MAX_TEXT_CHARS = 100_000;
/**
 * Longest HTML or base64 document in a JSON body: the 100 MB application body cap (Limits) is
 * the real bound; this documents it in the schema.
 */
export const MAX_DOCUMENT_CHARS = 100 * 1024 * 1024;
/** Largest value of a proto int32 field (turn_index, offset, limits). */
export const INT32_MAX = 2_147_483_647;
/** Largest int64 value a JSON number carries exactly (sequences, cursors, sizes). */
export const INT64_JSON_MAX = Number.MAX_SAFE_INTEGER;

const sessionId = z.string().max(MAX_ID_CHARS).regex(SESSION_ID_PATTERN);

const BASE64_BODY = /^[A-Za-z0-9+/_-]*={0,2}$/;
const DATA_URL_PREFIX = /^data:[^,]*;base64,/i;

/** Strips whitespace (MIME line breaks) and, when `allowDataUrl`, a `data:<type>;base64,` prefix. */
export function normalizeBase64(value: string, allowDataUrl = false): string {
  const body = allowDataUrl ? value.replace(DATA_URL_PREFIX, "") : value;
  return body.replace(/\s+/g, "");
}

/** True for standard or URL-safe base64, padded or not. */
export function isBase64(value: string, allowDataUrl = false): boolean {
  const s = normalizeBase64(value, allowDataUrl);
  if (!BASE64_BODY.test(s)) return false;
  const unpadded = s.replace(/=+$/, "");
  if (unpadded.length % 4 === 1) return false;
  return s.length === unpadded.length || s.length % 4 === 0;
}

const base64String = (allowDataUrl: boolean, description: string) =>
  z
    .string()
    .min(1)
    .max(MAX_DOCUMENT_CHARS)
    .refine((s) => isBase64(s, allowDataUrl), {
      message: "Base64 decoding error: invalid base64 data",
      ...issueType("base64_decode"),
    })
    .meta({ description, contentEncoding: "base64" });

/** Query integers: strict decimal strings become numbers; anything else fails as int_parsing. */
export function queryInt(value: unknown): unknown {
  return typeof value === "string" && /^\s*[+-]?\d+\s*$/.test(value) ? Number(value) : value;
}

/** Query booleans: true/false/1/0 (any case, as well as yes/no/on/off); anything else fails as bool_parsing. */
export function queryBool(value: unknown): unknown {
  if (typeof value !== "string") return value;
  const v = value.trim().toLowerCase();
  if (["true", "1", "yes", "on"].includes(v)) return true;
  if (["false", "0", "no", "off"].includes(v)) return false;
  return value;
}

// ---------------------------------------------------------------- requests

/** `upload_document_base64`: a file loaded verbatim (same formats as uploads). */
export const InlineUploadSchema = z
  .object({
    filename: z
      .string()
      .max(MAX_NAME_CHARS)
      .meta({ description: "Original file name; the extension picks the converter." }),
    file_base64: base64String(false, "The file's bytes, base64 encoded."),
  })
  .meta({ description: "A file sent inline with the chat request." })
  .register(apiSchemas, { id: "InlineUpload" });

/** One image for vision input. */
export const ImageAttachmentSchema = z
  .object({
    id: z.string().max(MAX_ID_CHARS).optional().meta({ description: "Caller's id of the image." }),
    name: z.string().max(MAX_NAME_CHARS).meta({ description: "File name." }),
    base64Data: base64String(true, "Image bytes, base64 encoded (a data: URL prefix is accepted)."),
    mimeType: z.string().max(255).meta({ description: "MIME type, e.g. image/png." }),
    size: z.number().int().min(0).max(INT64_JSON_MAX).optional().meta({ description: "Size in bytes." }),
  })
  .meta({ description: "An image for multimodal vision input." })
  .register(apiSchemas, { id: "ImageAttachment" });

/** `cursor_context`: the caller's cursor or selection. */
export const CursorContextSchema = z
  .object({
    chunk_id: z.string().max(128).nullish().meta({ description: "Chunk under the cursor." }),
    selected_text: z.string().max(MAX_TEXT_CHARS).nullish().meta({ description: "Selected text." }),
  })
  .meta({ description: "The caller's cursor or selection." })
  .register(apiSchemas, { id: "CursorContext" });

/** POST /v1/chat body (unshown-parts.md, Chat request). Unknown fields are ignored. */
export const ChatRequestSchema = z
  .object({
    message: z.string().max(MAX_MESSAGE_CHARS).meta({ description: "Non-empty instruction; empty gives 400." }),
    session_id: sessionId.nullish().meta({ description: "Session to use; minted by the server when omitted." }),
    document_html: z
      .string()
      .max(MAX_DOCUMENT_CHARS)
      .nullish()
      .meta({ description: "Loads or replaces the focused (or document_id) document verbatim. Omit on follow-ups." }),
    upload_document_base64: InlineUploadSchema.nullish(),
    document_id: z
      .string()
      .max(MAX_ID_CHARS)
      .nullish()
      .meta({ description: "Target document: session slot id or durable UUID." }),
    image_attachments: z
      .array(ImageAttachmentSchema)
      .max(MAX_IMAGE_ATTACHMENTS)
      .nullish()
      .meta({ description: "Images for vision input, at most 20." }),
    model_tier: z.enum(["core", "turbo", "pro", "max"]).default("core"),
    thinking_depth: z.enum(["fast", "balanced", "deep"]).default("balanced"),
    approval_mode: z
      .enum(["approve_all", "ask_every_time"])
      .default("approve_all")
      .meta({ description: "Approval pauses only exist in async jobs." }),
    response_mode: z
      .enum(["full", "compact"])
      .default("full")
      .meta({ description: "compact omits updated_html; only chunk_diffs are returned." }),
    cursor_context: CursorContextSchema.nullish(),
    cross_session_memory_key: z
      .string()
      .max(MAX_ID_CHARS)
      .nullish()
      .meta({ description: "Selects one end-customer's memory note." }),
    user_id: z
      .string()
      .max(MAX_ID_CHARS)
      .nullish()
      .meta({ description: "Deprecated and ignored: the API key decides scope." }),
  })
  .meta({ description: "Synchronous chat request." })
  .register(apiSchemas, { id: "ChatRequest" });
export type ChatRequestBody = z.output<typeof ChatRequestSchema>;

/** GET /v1/sessions query. */
export const ListSessionsQuerySchema = z.object({
  limit: z
    .preprocess(queryInt, z.number().int().min(1).max(200).default(50))
    .meta({ description: "Page size, 1 to 200." }),
  user_id: z
    .string()
    .max(MAX_ID_CHARS)
    .optional()
    .meta({ description: "Deprecated and ignored: the API key decides scope." }),
});

/** Path of the per-session routes. */
export const SessionPathSchema = z.object({
  session_id: sessionId.meta({ description: "The session id." }),
});

/** GET /v1/sessions/{session_id}/history query. */
export const HistoryQuerySchema = z.object({
  focus_document_id: z
    .string()
    .max(MAX_ID_CHARS)
    .optional()
    .meta({ description: "Durable (or slot) id of the document to restore when it is open in the session." }),
  include_document_html: z
    .preprocess(queryBool, z.boolean().default(true))
    .meta({ description: "false omits document_state.html_content." }),
});

// ---------------------------------------------------------------- responses

/** A change record (unshown-parts.md, Change records). */
export const ChangeRecordSchema = z
  .object({
    change_id: z.string(),
    operation: z.enum(["edit", "create", "delete"]),
    chunk_id: z.string(),
    document_id: z.string(),
    old_html: z.string(),
    new_html: z.string(),
    ai_explanation: z.string(),
    insert_after_chunk_id: z
      .string()
      .nullable()
      .optional()
      .meta({ description: "For create: the chunk the new one follows; null at the start of the document." }),
  })
  .meta({ description: "One applied or proposed chunk change." })
  .register(apiSchemas, { id: "ChangeRecord" });
export type ChangeRecordJson = z.output<typeof ChangeRecordSchema>;

/** document_changes of a chat response. */
export const DocumentChangesSchema = z
  .object({
    updated_html: z.string().optional().meta({ description: "Full HTML after the turn; omitted in compact mode." }),
    version_id: z.string(),
    changes_summary: z.string(),
    requires_approval: z.boolean(),
    pending_changes: z.array(ChangeRecordSchema),
    changes: z.array(ChangeRecordSchema),
    chunk_diffs: z.array(ChangeRecordSchema),
    document_id: z.string().meta({ description: "Durable id of the document." }),
    concurrent_merges: z
      .array(
        z.object({
          chunk_id: z.string(),
          status: z.enum(["merged", "conflict"]),
          conflict_id: z.string().nullable(),
          document_id: z.string(),
        }),
      )
      .optional()
      .meta({
        description:
          "Chunks where this turn met another session's commit: merged around, or (conflict) this turn's edit was not applied; resolve it with re-edit.",
      }),
  })
  .register(apiSchemas, { id: "DocumentChanges" });
export type DocumentChangesJson = z.output<typeof DocumentChangesSchema>;

/** A promotion entry of the usage object. */
export const PromotionSchema = z
  .object({
    redemption_id: z.string(),
    name: z.string(),
    ops_remaining: z.number().int(),
    ops_granted: z.number().int(),
    expires_at: z.string(),
  })
  .register(apiSchemas, { id: "Promotion" });

/** The usage object (interface-spec, Resources). */
export const UsageSchema = z
  .object({
    monthly_used: z.number().int(),
    monthly_limit: z.number().int(),
    monthly_remaining: z.number().int(),
    was_billable: z.boolean(),
    ops_charged: z.number().int(),
    quota_exhausted: z.boolean(),
    subscription_tier: z.string(),
    bucket_used: z.string(),
    redemption_id: z.string().nullable(),
    promotions: z.array(PromotionSchema),
  })
  .meta({ description: "Monthly operations usage after the request." })
  .register(apiSchemas, { id: "Usage" });
export type UsageJson = z.output<typeof UsageSchema>;

/** POST /v1/chat 200. */
export const ChatResponseSchema = z
  .object({
    response: z.string().meta({ description: "The AI's reply text." }),
    session_id: z.string(),
    document_changes: DocumentChangesSchema.optional(),
    usage: UsageSchema,
  })
  .register(apiSchemas, { id: "ChatResponse" });
export type ChatResponseJson = z.output<typeof ChatResponseSchema>;

/** One entry of GET /v1/sessions. */
export const SessionSummarySchema = z
  .object({
    session_id: z.string(),
    title: z.string(),
    created_at: z.string().nullable().meta({ description: "ISO 8601." }),
    last_updated: z.string().nullable().meta({ description: "ISO 8601 time of the last activity." }),
    message_count: z.number().int(),
    document_count: z.number().int(),
  })
  .register(apiSchemas, { id: "SessionSummary" });
export type SessionSummaryJson = z.output<typeof SessionSummarySchema>;

/** GET /v1/sessions 200. */
export const SessionListResponseSchema = z
  .object({
    sessions: z.array(SessionSummarySchema).meta({ description: "Most recent activity first." }),
    total: z.number().int().meta({ description: "Number of sessions returned." }),
  })
  .register(apiSchemas, { id: "SessionListResponse" });
export type SessionListResponseJson = z.output<typeof SessionListResponseSchema>;

/** A history message (unshown-parts.md, Revert). */
export const HistoryMessageSchema = z
  .object({
    id: z.string(),
    sender: z.enum(["user", "ai"]),
    content: z.string(),
    timestamp: z.string().nullable().meta({ description: "ISO 8601." }),
    turn_index: z.number().int().meta({ description: "From 0; a user message and its reply share it." }),
    checkpoint_id: z.string().nullable().meta({ description: "Restore point of the turn; null when none." }),
  })
  .register(apiSchemas, { id: "HistoryMessage" });
export type HistoryMessageJson = z.output<typeof HistoryMessageSchema>;

/** document_state of the history response. */
export const DocumentStateSchema = z
  .object({
    document_id: z.string().meta({ description: "Session-local slot id." }),
    durable_document_id: z.string().nullable().meta({ description: "Permanent UUID; null until first save." }),
    title: z.string(),
    html_content: z
      .string()
      .optional()
      .meta({ description: "The HTML with chunk ids kept; omitted when include_document_html=false." }),
    version_id: z.string().nullable(),
    chunk_count: z.number().int(),
    last_modified: z.string().nullable().meta({ description: "ISO 8601." }),
    attachments: z.array(z.record(z.string(), z.unknown())),
  })
  .register(apiSchemas, { id: "DocumentState" });
export type DocumentStateJson = z.output<typeof DocumentStateSchema>;

/** GET /v1/sessions/{session_id}/history 200. */
export const HistoryResponseSchema = z
  .object({
    session_id: z.string(),
    messages: z.array(HistoryMessageSchema),
    document_state: DocumentStateSchema.nullable(),
    attachments: z.array(z.record(z.string(), z.unknown())),
    editor_actions: z.array(z.record(z.string(), z.unknown())),
    editor_action: z.enum(["update", "clear"]).meta({ description: "clear when the session holds no document." }),
  })
  .register(apiSchemas, { id: "HistoryResponse" });
export type HistoryResponseJson = z.output<typeof HistoryResponseSchema>;

/** GET /health. */
export const HealthResponseSchema = z
  .object({
    status: z.enum(["healthy", "unhealthy"]),
    failing: z.array(z.string()).optional().meta({ description: "Services that did not report SERVING." }),
  })
  .register(apiSchemas, { id: "HealthResponse" });
export type HealthResponseJson = z.output<typeof HealthResponseSchema>;

// ---------------------------------------------------------------- errors

/** `{detail: string}` (interface-spec, Errors). */
export const ErrorSchema = z
  .object({ detail: z.string() })
  .catchall(z.unknown())
  .meta({ description: "Error body; some errors add fields such as code." })
  .register(apiSchemas, { id: "HTTPError" });

/** One validation item. */
export const ValidationIssueSchema = z
  .object({
    type: z.string(),
    loc: z.array(z.union([z.string(), z.number().int()])),
    msg: z.string(),
  })
  .register(apiSchemas, { id: "ValidationError" });

/** 422 body. */
export const ValidationErrorSchema = z
  .object({ detail: z.array(ValidationIssueSchema) })
  .register(apiSchemas, { id: "HTTPValidationError" });

/** 413 body (Errors rule 5). */
export const RequestTooLargeSchema = z
  .object({
    detail: z.string(),
    error_code: z.literal("request_too_large"),
    message_user: z.string(),
    request_size_mb: z.number(),
    max_size_mb: z.number(),
    suggested_action: z.literal("split_request"),
    contact_email: z.string(),
    support_event_id: z.string(),
  })
  .register(apiSchemas, { id: "RequestTooLargeError" });

/** 415 body (Errors rule 1). */
export const UnsupportedMediaTypeSchema = z
  .object({
    detail: z.string().meta({ description: "Names the supported extensions." }),
    code: z.string().optional(),
    supported_extensions: z.array(z.string()).optional(),
  })
  .register(apiSchemas, { id: "UnsupportedMediaTypeError" });

/** 429 body (Errors rule 2); Retry-After and X-Usage-* headers come with it. */
export const QuotaExceededSchema = z
  .object({
    detail: z.string(),
    code: z.string().optional(),
    usage: z.record(z.string(), z.unknown()).optional(),
  })
  .register(apiSchemas, { id: "QuotaExceededError" });
