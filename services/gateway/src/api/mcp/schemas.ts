// The MCP endpoint's schemas: the HTTP body of POST /v1/mcp (one JSON-RPC message or a batch), and
// each tool's input. Tool fields are the HTTP routes' own field schemas (same names, same bounds),
// so a value /v1 refuses is refused here too, as a tool error naming the field. Query parameters'
// schemas coerce strings (z.preprocess), which JSON Schema cannot express, so their bounds are
// restated from the same constants.
import { JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { ChatRequestSchema, MAX_MESSAGE_CHARS } from "../chat/schemas.js";
import { DownloadRequestSchema, EXPORT_FORMATS, ExportOptionsSchema } from "../exports/schemas.js";
import { ApproveRequestSchema, ChangeDecisionSchema } from "../jobs/schemas.js";
import { SaveDocumentSchema } from "../roster/schemas.js";
import { apiSchemas, documentRef, INT32_MAX, MAX_ID_CHARS, sessionId } from "../shared/schemas.js";

/** Messages in one batch, as the SDK's transport allows. */
const MAX_BATCH = 100;

/** One JSON-RPC 2.0 message as OpenAPI documents it; the SDK's own schema decides validity. */
const JsonRpcMessageDoc = z
  .looseObject({
    jsonrpc: z.literal("2.0"),
    id: z.union([z.string().max(MAX_ID_CHARS), z.number().int()]).optional(),
    method: z.string().max(MAX_ID_CHARS).optional(),
    params: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ description: "A JSON-RPC 2.0 request, notification or response (MCP)." });

/**
 * POST /v1/mcp body: a JSON-RPC message or a batch of 1..100. Checked here against the SDK's
 * JSONRPCMessageSchema so a malformed message is the gateway's 422 naming it (as every /v1 route
 * answers), never the transport's bare JSON-RPC parse error.
 */
export const McpBodySchema = z
  .union([JsonRpcMessageDoc, z.array(JsonRpcMessageDoc).min(1).max(MAX_BATCH)])
  .superRefine((value, ctx) => {
    const messages = Array.isArray(value) ? value : [value];
    messages.forEach((message, i) => {
      if (!JSONRPCMessageSchema.safeParse(message).success) {
        ctx.addIssue({
          code: "custom",
          path: Array.isArray(value) ? [i] : [],
          message: "Not a JSON-RPC 2.0 request, notification or response (MCP Streamable HTTP)",
        });
      }
    });
  })
  .register(apiSchemas, { id: "McpMessage" });

/** The MCP answer as OpenAPI documents it: JSON-RPC responses (JSON), or nothing (202) for notifications. */
export const McpResponseSchema = z
  .union([z.record(z.string(), z.unknown()), z.array(z.record(z.string(), z.unknown()))])
  .meta({ description: "The JSON-RPC response(s); 202 with no body when the POST held only notifications." });

const chat = ChatRequestSchema.shape;
const download = DownloadRequestSchema.shape;
const approve = ApproveRequestSchema.shape;

/** A durable document id (the UUID of GET /v1/documents), as /v1/documents/{document_id} bounds it. */
const durableId = z.string().min(1).max(256).describe("Durable document id (UUID), as list_documents returns it.");
const optionalSession = sessionId.optional().describe("A session from open_document; one is created when omitted.");

/** list_documents: GET /v1/documents (limit 1..200, default 50; offset >= 0). */
export const ListDocumentsInput = {
  limit: z.number().int().min(1).max(200).default(50).describe("1 to 200, default 50."),
  offset: z.number().int().min(0).max(INT32_MAX).default(0).describe("At least 0."),
  archived: z.boolean().default(false).describe("List archived documents instead of active ones."),
};

/** open_document: POST /v1/sessions/init, or POST /v1/sessions/{session_id}/documents/open. */
export const OpenDocumentInput = {
  document_id: documentRef.describe("The saved document to open (its UUID)."),
  session_id: sessionId.optional().describe("The session to open it in; a new session is created when omitted."),
};

/** What read_document reads. */
export const READ_MODES = ["outline", "section", "chunks", "table_rows"] as const;

/** read_document: documents.ReadDocument (the agent's reading tools' view of the document). */
export const ReadDocumentInput = {
  document_id: durableId,
  mode: z
    .enum(READ_MODES)
    .default("outline")
    .describe(
      "outline: chunk ids, tags and previews (paged); section: a heading chunk and its section; chunks: chunks " +
        "by id; table_rows: a range of a table's rows.",
    ),
  headings_only: z.boolean().default(false).describe("outline: only headings, each with its section's size."),
  from_chunk_id: z.string().max(128).optional().describe("outline: start at this chunk (next_from_chunk_id)."),
  limit: z.number().int().min(1).max(1000).default(200).describe("outline: entries per page, 1 to 1000."),
  chunk_id: z.string().min(1).max(128).optional().describe("section: the heading chunk; table_rows: the table chunk."),
  chunk_ids: z.array(z.string().min(1).max(128)).min(1).max(100).optional().describe("chunks: 1 to 100 chunk ids."),
  table: z
    .number()
    .int()
    .min(1)
    .max(INT32_MAX)
    .optional()
    .describe("table_rows without chunk_id: the n-th table of the document (1 = the first)."),
  row_offset: z.number().int().min(0).max(INT32_MAX).default(0).describe("table_rows: rows to skip."),
  row_limit: z.number().int().min(1).max(500).default(50).describe("table_rows: rows to return, 1 to 500."),
};

/** edit_document: POST /v1/chat (approve_all) or POST /v1/chat/async (ask_every_time), with the chat's bounds. */
export const EditDocumentInput = {
  instruction: z.string().trim().min(1).max(MAX_MESSAGE_CHARS).describe("What to change, in words (the chat message)."),
  session_id: optionalSession,
  document_id: z
    .string()
    .min(1)
    .max(MAX_ID_CHARS)
    .optional()
    .describe("The document to edit (slot id or UUID); needed when session_id is omitted."),
  approval_mode: chat.approval_mode.describe(
    "approve_all (default) commits at once; ask_every_time proposes the changes for approve_changes.",
  ),
  model_tier: chat.model_tier,
  thinking_depth: chat.thinking_depth,
};

/** save_document: POST /v1/sessions/{session_id}/documents/{document_id}/save. */
export const SaveDocumentInput = {
  session_id: sessionId.describe("The session holding the document (open_document)."),
  document_id: documentRef.describe("Slot id or UUID of the document in that session."),
  html: SaveDocumentSchema.shape.html,
  base_version_id: SaveDocumentSchema.shape.base_version_id.describe(
    "The version the edit started from; the same chunk changed since is a conflict.",
  ),
};

/** list_versions: GET /v1/documents/{document_id}/versions (limit 1..200, larger clamped). */
export const ListVersionsInput = {
  document_id: durableId,
  limit: z.number().int().min(1).max(200).default(50).describe("1 to 200, default 50."),
  offset: z.number().int().min(0).max(INT32_MAX).default(0).describe("At least 0."),
};

/** restore_version: POST /v1/documents/{document_id}/versions/{version_id}/restore. */
export const RestoreVersionInput = {
  document_id: durableId,
  version_id: z.string().min(1).max(256).describe("The version to restore (list_versions)."),
};

/** export_document: POST /v1/downloads (a pre-signed link valid 15 minutes). */
export const ExportDocumentInput = {
  session_id: sessionId.optional().describe("The session holding the document; one is opened when omitted."),
  document_id: download.document_id.describe("The document (UUID, or slot id with session_id)."),
  format: z.enum(EXPORT_FORMATS).default("docx"),
  filename: download.filename,
  options: ExportOptionsSchema.optional(),
};

/** approve_changes: POST /v1/chat/{session_id}/approve. */
export const ApproveChangesInput = {
  session_id: sessionId.describe("The session of the job (edit_document's answer)."),
  job_id: approve.job_id,
  approved: approve.approved,
  change_id: z.string().max(MAX_ID_CHARS).optional().describe("One change; omitted with no changes: all pending."),
  feedback: z.string().max(10_000).optional().describe("Why; reaches the agent."),
  changes: z.array(ChangeDecisionSchema).max(10_000).optional().describe("A batch of decisions."),
};
