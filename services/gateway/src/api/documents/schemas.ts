// The document library (interface-spec endpoints 3 and 5-8, 15): list, detail, update, archive
// and unarchive saved documents, and a session's document events.
import { UUID_PATTERN } from "@redline/service-kit";
import { z } from "zod";
import {
  apiSchemas,
  ChangeRecordSchema,
  clampedPageLimit,
  component,
  INT32_MAX,
  INT64_JSON_MAX,
  MAX_ID_CHARS,
  MAX_NAME_CHARS,
  pageLimit,
  pageOffset,
  queryFlag,
  queryInt,
  sessionId,
} from "../shared/schemas.js";

/** Path of /v1/documents/{document_id}. */
export const DocumentPathSchema = z.object({
  document_id: z.string().min(1).max(256).meta({ description: "Durable document UUID." }),
});

/** GET /v1/documents query (endpoint 3). */
export const ListDocumentsQuerySchema = z.object({
  limit: pageLimit(50).meta({ description: "1 to 200." }),
  offset: z
    .preprocess(queryInt, z.number().int().min(0).max(INT32_MAX).default(0))
    .meta({ description: "At least 0 (an int32)." }),
  include_preview: queryFlag(false, "Adds preview_html (the first chunks)."),
  archived: queryFlag(false, "Lists archived documents instead of active ones."),
});

/** include_html query. */
export const IncludeHtmlQuerySchema = z.object({ include_html: queryFlag(false, "Adds the HTML.") });

/** DELETE /v1/documents/{id} query (endpoint 7). */
export const ArchiveQuerySchema = z.object({
  force: queryFlag(false, "Archive even when open in other sessions; every session is unlinked and notified."),
  from_session: sessionId.optional().meta({ description: "The caller's own session, left out of the in-use check." }),
});

/** GET .../doc-events query (endpoint 15). */
export const DocEventsQuerySchema = z.object({
  after_id: z
    .preprocess(queryInt, z.number().int().min(0).max(INT64_JSON_MAX).default(0))
    .meta({ description: "Cursor: events with a greater id." }),
  include_own: queryFlag(false, "Include this session's own writes."),
  limit: pageLimit(100, 500).meta({ description: "1 to 500." }),
});

/** A length in inches; no page (a PDF's largest included) is over 200 in a side. */
const inches = z.number().min(0).max(200).meta({ description: "Inches, 0 to 200." });

/**
 * A page setup a caller sends: `size` a paper name or `{width, height}` in inches, `orientation`,
 * `margins` a preset name, `{top, right, bottom, left}` in inches or null. Each key is optional;
 * any other key is a 422 naming it (redline.common.v1.PageSetup has nowhere to keep it).
 */
const PageSetupInputSchema = z
  .strictObject({
    size: z.union([z.string().max(MAX_ID_CHARS), z.strictObject({ width: inches, height: inches })]).optional(),
    orientation: z.string().max(MAX_ID_CHARS).optional().meta({ description: "portrait or landscape." }),
    margins: z
      .union([
        z.string().max(MAX_ID_CHARS),
        z.strictObject({ top: inches, right: inches, bottom: inches, left: inches }),
        z.null(),
      ])
      .optional(),
  })
  .meta({ description: "Page setup {size, orientation, margins}; null clears it." });

/** PATCH /v1/documents/{id} (UpdateDocumentRequest); unknown fields are kept so `parts` can be refused with 400. */
export const UpdateDocumentSchema = z
  .looseObject({
    title: z.string().min(1).max(MAX_NAME_CHARS).optional().meta({ description: "New title." }),
    page_setup: PageSetupInputSchema.nullable().optional(),
  })
  .meta({ description: "UpdateDocumentRequest. A legacy parts field gives 400 parts_moved_to_chunks." })
  .register(apiSchemas, { id: "UpdateDocumentRequest" });

/** A Files entry (metadata only). */
export const DocumentSummarySchema = component("DocumentSummary", {
  document_id: z.string().meta({ description: "Durable UUID." }),
  durable_document_id: z.string(),
  title: z.string(),
  version_id: z.string(),
  chunk_count: z.number().int(),
  section_count: z.number().int(),
  archived: z.boolean(),
  status: z.enum(["active", "archived"]),
  created_at: z.string().optional(),
  updated_at: z.string().optional(),
  session_count: z.number().int().meta({ description: "Sessions that have it open." }),
  preview_html: z.string().optional().meta({ description: "Only with include_preview=true." }),
});

/** GET /v1/documents 200. */
export const DocumentListResponseSchema = component("DocumentListResponse", {
  documents: z.array(DocumentSummarySchema),
  total: z.number().int().meta({ description: "Matching documents over all pages." }),
  limit: z.number().int(),
  offset: z.number().int(),
  imported: z.number().int().meta({
    description:
      "Documents of earlier chats imported by this call (always 0: chats store documents as they load them).",
  }),
});

/** A chat session that has the document open. */
export const PriorChatSchema = z.object({
  session_id: z.string(),
  title: z.string(),
  document_id: z.string().meta({ description: "The slot id in that session." }),
  last_updated: z.string().optional(),
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
  version_id: z.string().optional().meta({ description: "Only with include_html=true." }),
  html: z.string().optional(),
  page_setup: z.record(z.string(), z.unknown()).nullable().optional(),
}).register(apiSchemas, { id: "DocumentDetail" });

/** PATCH 200. */
export const UpdateDocumentResponseSchema = component("UpdateDocumentResponse", {
  status: z.enum(["renamed", "updated"]).meta({ description: "renamed for a title-only call." }),
  document: DocumentSummarySchema,
});

/** Archive 200. */
export const ArchiveResponseSchema = component("ArchiveResponse", {
  document_id: z.string(),
  status: z.literal("archived"),
  archived: z.literal(true),
  already_archived: z.boolean(),
  unlinked_sessions: z.number().int().meta({ description: "Sessions the document was closed in (and notified)." }),
});

/** Unarchive 200 (endpoint 8). */
export const UnarchiveResponseSchema = component("UnarchiveResponse", {
  document_id: z.string(),
  status: z.literal("active"),
  unarchived: z.boolean().meta({ description: "False when it was already active or is unknown (a no-op)." }),
});

/** 409 document_in_use. */
export const DocumentInUseSchema = component("DocumentInUseError", {
  detail: z.string(),
  code: z.literal("document_in_use"),
  open_in_sessions: z.number().int(),
  suggested_action: z.string(),
});

/** 409 already_archived: an archive that would archive nothing (interface-spec rule 10). */
export const AlreadyArchivedSchema = component("AlreadyArchivedError", {
  detail: z.string(),
  code: z.literal("already_archived"),
});

/** One doc-event. */
export const DocEventSchema = component("DocEvent", {
  id: z.number().int(),
  type: z.literal("document_updated"),
  document_id: z.string().meta({ description: "Durable id." }),
  slot_document_id: z
    .string()
    .optional()
    .meta({ description: "This session's slot id for it; left out when no longer open." }),
  version_id: z.string(),
  session_id: z.string().optional().meta({ description: "The committing session." }),
  change: z.string().meta({ description: "edit, save, replace, re-edit, restore, metadata, archived or unarchived." }),
  chunk_ids: z.array(z.string()).optional(),
  title: z.string().optional(),
  created_at: z.string().optional(),
});

/** GET doc-events 200. */
export const DocEventsResponseSchema = component("DocEventsResponse", {
  session_id: z.string(),
  events: z.array(DocEventSchema),
  last_id: z.number().int().meta({ description: "The next after_id." }),
  has_more: z.boolean(),
});

/** Path of /v1/documents/{document_id}/versions/{version_id}. */
export const VersionPathSchema = DocumentPathSchema.extend({
  version_id: z.string().min(1).max(256).meta({ description: "Version UUID." }),
});

/** GET /v1/documents/{id}/versions query: a limit over 200 is clamped to 200, not refused. */
export const ListVersionsQuerySchema = z.object({
  limit: clampedPageLimit(50).meta({ description: "1 to 200 (larger values are clamped to 200); default 50." }),
  offset: pageOffset,
});

/** One version of a document: what wrote it, when, and how much it changed. */
const versionFields = {
  version_id: z.string(),
  seq: z.number().int().meta({ description: "1 for the first version, then one more per commit." }),
  kind: z.string().meta({ description: "What wrote it: create, replace, edit or restore." }),
  session_id: z.string().optional().meta({ description: "The session that committed it; absent when none." }),
  created_at: z.string().meta({ description: "ISO 8601." }),
  chunks_changed: z.number().int().meta({ description: "Chunks this version inserted, changed or deleted." }),
  summary: z.string().meta({ description: "The commit's summary; empty when none." }),
};
export const VersionSchema = component("DocumentVersion", versionFields);

/** GET /v1/documents/{id}/versions response. */
export const VersionListResponseSchema = component("DocumentVersionList", {
  versions: z.array(VersionSchema).meta({ description: "Newest first." }),
  total: z.number().int(),
});

/** GET /v1/documents/{id}/versions/{version_id} response: the version, and its HTML on request. */
export const VersionDetailSchema = component("DocumentVersionDetail", {
  ...versionFields,
  html: z.string().optional().meta({ description: "That version's HTML; only with include_html=true." }),
});

/** POST .../versions/{version_id}/restore 200: the version written (or head when nothing was). */
export const RestoreVersionResponseSchema = component("DocumentVersionRestore", {
  ...versionFields,
  restored: z.boolean().meta({
    description:
      "True when a new version was written; false when head already had that version's content (nothing written, head described).",
  }),
  restored_from: z.string().meta({ description: "The version whose content was restored." }),
});

/** 409 job_running: a session that holds the document has a job running or awaiting approval. */
export const JobRunningSchema = component("JobRunningError", {
  detail: z.string(),
  code: z.literal("job_running"),
  session_ids: z.array(z.string()).meta({ description: "The sessions holding the document with an open job." }),
});

/** 409 document_archived: restore needs an active document. */
export const DocumentArchivedSchema = component("DocumentArchivedError", {
  detail: z.string(),
  code: z.literal("document_archived"),
});

/** GET .../versions/{version_id}/diff query. */
export const DiffVersionsQuerySchema = z.object({
  against: z
    .string()
    .regex(UUID_PATTERN, "must be a version id (a UUID)")
    .optional()
    .meta({ description: "The version compared against (old_html); default: the version's predecessor." }),
});

/** GET .../versions/{version_id}/diff 200: change records from `against_version_id` to `version_id`. */
export const VersionDiffSchema = component("DocumentVersionDiff", {
  document_id: z.string(),
  version_id: z.string().meta({ description: "The version compared (new_html)." }),
  against_version_id: z.string().optional().meta({
    description:
      "The version compared against (old_html); left out for the first version, compared with an empty document.",
  }),
  changes: z.array(ChangeRecordSchema).meta({
    description:
      "Edits and creates in the version's chunk order, then deletes; ai_explanation is empty. Ids are stable for the same pair of versions.",
  }),
});
