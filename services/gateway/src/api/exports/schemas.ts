// Exports (unshown-parts.md, Export): the export request and its options, email exports and
// download links.
import { z } from "zod";
import { component, MAX_DOCUMENT_CHARS, MAX_ID_CHARS, sessionId } from "../shared/schemas.js";

/** Custom margins in inches; no paper is wider than 17 in, so 10 in a side is a generous bound. */
const inches = z.number().min(0).max(10);

const margins = z.object({ top: inches, right: inches, bottom: inches, left: inches });

/** Export options (unshown-parts.md, Export). */
export const ExportOptionsSchema = component("ExportOptions", {
  paper_size: z
    .enum(["Letter", "A4", "Legal"])
    .optional()
    .meta({ description: "Default: the document's, else Letter." }),
  orientation: z.enum(["portrait", "landscape"]).optional(),
  margins: z.enum(["normal", "narrow", "moderate", "wide", "custom"]).optional(),
  custom_margins_inches: margins.optional(),
  embed_images: z.boolean().default(false),
  watermark_text: z.string().max(200).optional(),
  watermark_opacity: z.number().min(0).max(1).default(0.3),
  track_changes: z
    .boolean()
    .default(false)
    .meta({
      description:
        "docx only, for a session's stored document: the edits since `since_version` are written as Word revisions " +
        '(insertions and deletions, each with its author — "Redline AI" for AI turns, the key\'s user for saves and ' +
        "uploads — and date) for the user to accept or reject in Word. 422 with another format or with `html` / " +
        "`upload_id` (no versions).",
    }),
  since_version: z
    .number()
    .int()
    .min(1)
    .optional()
    .meta({
      description:
        "With track_changes: the version (its `seq`, as GET /v1/documents/{id}/versions lists) the edits are counted " +
        "from. Default: the version the document was created or loaded as. 422 for a version the document does not have.",
    }),
});

export type ExportOptionsJson = z.output<typeof ExportOptionsSchema>;

/** Export formats; `doc` is a legacy alias of docx (Versioning 3). */
export const EXPORT_FORMATS = ["docx", "pdf", "html", "markdown", "txt", "doc"] as const;

/** POST /v1/documents/export. One source: html, session_id (+ document_id) or upload_id. */
export const ExportRequestSchema = component("ExportRequest", {
  html: z.string().max(MAX_DOCUMENT_CHARS).optional().meta({ description: "HTML to export." }),
  session_id: sessionId
    .optional()
    .meta({ description: "Export a document of this session (the focused one by default)." }),
  document_id: z.string().max(MAX_ID_CHARS).optional().meta({ description: "Slot or durable id within the session." }),
  upload_id: z.string().max(64).optional().meta({ description: "A pre-signed upload of purpose export-html." }),
  format: z.enum(EXPORT_FORMATS).default("docx"),
  filename: z.string().max(255).optional().meta({ description: "File name without or with extension." }),
  options: ExportOptionsSchema.optional(),
});

export type ExportRequestJson = z.output<typeof ExportRequestSchema>;

/** POST /v1/documents/export/email-request. */
export const EmailExportSchema = component("EmailExportRequest", {
  session_id: sessionId,
  document_id: z.string().max(MAX_ID_CHARS).optional(),
  format: z.enum(EXPORT_FORMATS).default("docx"),
  options: ExportOptionsSchema.optional(),
  filename: z.string().max(255).optional(),
  recipient_email: z.string().max(320).nullish().meta({
    description:
      "Where to mail the link; absent, null or empty: the email on file of the key's user (PATCH /v1/users/me).",
  }),
});

/** Email export reply. */
export const EmailExportResponseSchema = component("EmailExportResponse", {
  job_id: z.string(),
  recipient_email: z.string(),
  status: z.literal("queued"),
  eta: z.string().meta({ description: "ISO 8601." }),
  message: z.string(),
});

/** POST /v1/downloads. */
export const DownloadRequestSchema = component("DownloadRequest", {
  session_id: sessionId.optional(),
  document_id: z.string().max(MAX_ID_CHARS).optional(),
  html: z.string().max(MAX_DOCUMENT_CHARS).optional(),
  upload_id: z.string().max(64).optional(),
  format: z.enum(EXPORT_FORMATS).default("docx"),
  filename: z.string().max(255).optional(),
  options: ExportOptionsSchema.optional(),
});

/** POST /v1/downloads reply. */
export const DownloadResponseSchema = component("DownloadResponse", {
  download_url: z.string(),
  expires_at: z.string(),
  expires_in_seconds: z.number().int(),
  filename: z.string(),
  format: z.string(),
});
