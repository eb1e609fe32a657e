// The chat contract (interface-spec endpoint 1, unshown-parts.md Chat request, Change
// records and Revert): the chat request and response, and revert / redo-revert.
import { z } from "zod";
import { issueType } from "../../validation.js";
import {
  apiSchemas,
  base64String,
  ChangeRecordSchema,
  component,
  deprecatedUserId,
  INT32_MAX,
  INT64_JSON_MAX,
  isBase64,
  MAX_DOCUMENT_CHARS,
  MAX_ID_CHARS,
  MAX_NAME_CHARS,
  MAX_TEXT_CHARS,
  sessionId,
  UsageSchema,
} from "../shared/schemas.js";
import { imageProblem } from "./images.js";

/** Longest chat message, in characters. */
export const MAX_MESSAGE_CHARS = 100_000;

/** Most images per chat request. */
export const MAX_IMAGE_ATTACHMENTS = 20;

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
  .superRefine((img, ctx) => {
    // Bad base64 is already base64_decode on base64Data; the checks below read the bytes.
    if (!isBase64(img.base64Data, true)) return;
    const problem = imageProblem(img);
    if (problem) ctx.addIssue({ code: "custom", message: problem, ...issueType("value_error") });
  })
  .meta({ description: "An image for multimodal vision input: PNG, JPEG, GIF or WebP by its bytes, at most 20 MiB." })
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
    upload_id: z
      .string()
      .max(64)
      .nullish()
      .meta({
        description:
          "Instead of upload_document_base64: a pre-signed upload of purpose document (POST /v1/uploads, then PUT), " +
          "loaded the same way. 404 when unknown, expired or never PUT.",
      }),
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
      .meta({ description: "compact omits updated_html and changes; only chunk_diffs are returned." }),
    cursor_context: CursorContextSchema.nullish(),
    cross_session_memory_key: z
      .string()
      .max(MAX_ID_CHARS)
      .nullish()
      .meta({ description: "Selects one end-customer's memory note." }),
    user_id: deprecatedUserId(true),
  })
  .meta({ description: "Synchronous chat request." })
  .register(apiSchemas, { id: "ChatRequest" });

export type ChatRequestBody = z.output<typeof ChatRequestSchema>;

/** document_changes of a chat response. */
export const DocumentChangesSchema = component("DocumentChanges", {
  updated_html: z.string().optional().meta({ description: "Full HTML after the turn; omitted in compact mode." }),
  version_id: z.string(),
  changes_summary: z.string(),
  requires_approval: z.boolean(),
  pending_changes: z.array(ChangeRecordSchema),
  changes: z
    .array(ChangeRecordSchema)
    .optional()
    .meta({ description: "The same records as chunk_diffs; omitted in compact mode." }),
  chunk_diffs: z.array(ChangeRecordSchema),
  document_id: z.string().meta({ description: "Durable id of the document." }),
  concurrent_merges: z
    .array(
      z.object({
        chunk_id: z.string(),
        status: z.enum(["merged", "conflict"]),
        conflict_id: z.string().optional(),
        document_id: z.string(),
      }),
    )
    .optional()
    .meta({
      description:
        "Chunks where this turn met another session's commit: merged around, or (conflict) this turn's edit was not applied; resolve it with re-edit.",
    }),
});

export type DocumentChangesJson = z.output<typeof DocumentChangesSchema>;

/** POST /v1/chat 200. */
export const ChatResponseSchema = component("ChatResponse", {
  response: z.string().meta({ description: "The AI's reply text." }),
  session_id: z.string(),
  document_changes: DocumentChangesSchema.optional(),
  usage: UsageSchema,
});

export type ChatResponseJson = z.output<typeof ChatResponseSchema>;

/** POST /v1/sessions/{session_id}/revert body. */
export const RevertRequestSchema = component("RevertRequest", {
  turn_index: z
    .number()
    .int()
    .min(0)
    .max(INT32_MAX)
    .meta({ description: "Rewind to just before this turn's user message (an int32)." }),
  dry_run: z.boolean().default(false).meta({ description: "Report without changing anything." }),
});

/** POST /v1/sessions/{session_id}/redo-revert body. */
export const RedoRevertRequestSchema = component("RedoRevertRequest", {
  turn_index: z.number().int().min(0).max(INT32_MAX).meta({ description: "The turn_index given to the revert." }),
  redo_checkpoint_id: z.string().min(1).max(MAX_ID_CHARS).meta({ description: "The revert's redo_checkpoint_id." }),
});

/** The revert response (unshown-parts.md, Revert). */
export const RevertResponseSchema = component("RevertResponse", {
  session_id: z.string(),
  reverted_to_turn: z.number().int().meta({ description: "The last turn left active (-1 = empty)." }),
  compose_text: z.string().meta({ description: "The reverted user message, for the composer." }),
  archived_turn_count: z.number().int(),
  document_state: z
    .object({
      html_content: z.string(),
      version_id: z.string(),
      chunk_count: z.number().int(),
      last_modified: z.string().optional(),
      attachments: z.array(z.unknown()),
    })
    .nullable(),
  editor_action: z.enum(["update", "clear"]),
  redo_checkpoint_id: z
    .string()
    .optional()
    .meta({ description: "Undo token for redo-revert; left out for a dry run." }),
});
