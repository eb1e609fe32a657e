// Schemas of the file routes (unshown-parts.md, "Uploads, attachments, templates" and "Export"):
// document uploads (multipart and base64) and exports.
import { z } from "zod";
import type { UploadedFile } from "./body.js";
import {
  apiSchemas,
  isBase64,
  MAX_DOCUMENT_CHARS,
  MAX_ID_CHARS,
  MAX_NAME_CHARS,
  SESSION_ID_PATTERN,
} from "./schemas.js";
import { issueType } from "./validation.js";

const sessionId = z.string().max(MAX_ID_CHARS).regex(SESSION_ID_PATTERN);

const base64File = z
  .string()
  .min(1)
  .max(MAX_DOCUMENT_CHARS)
  .refine((s) => isBase64(s), { message: "Base64 decoding error: invalid base64 data", ...issueType("base64_decode") })
  .meta({ description: "The file's bytes, base64 encoded.", contentEncoding: "base64" });

/** Form booleans: true/false/1/0/yes/no/on/off; JSON booleans pass. */
function formBool(value: unknown): unknown {
  if (typeof value !== "string") return value;
  const v = value.trim().toLowerCase();
  if (["true", "1", "yes", "on"].includes(v)) return true;
  if (["false", "0", "no", "off", ""].includes(v)) return false;
  return value;
}

/** How an upload opens in the session's roster; `new_tab` is an alias of `new_focused`. */
export const OPEN_MODES = ["replace", "new_focused", "background", "new_tab"] as const;
export type OpenMode = (typeof OPEN_MODES)[number];

const uploadedFile = z
  .custom<UploadedFile>((v) => typeof v === "object" && v !== null && Buffer.isBuffer((v as UploadedFile).content), {
    message: "Field required: a file part named 'file'",
  })
  .refine((f) => f.filename.length <= MAX_NAME_CHARS, {
    message: `String should have at most ${MAX_NAME_CHARS} characters`,
    path: ["filename"],
    ...issueType("string_too_long"),
  })
  .meta({ description: "The file (multipart part `file`).", type: "string", format: "binary" });

/** POST /v1/documents/upload (multipart/form-data). */
export const UploadDocumentFormSchema = z.object({
  file: uploadedFile,
  session_id: sessionId.optional().meta({ description: "The session to open it in; minted when omitted." }),
  open_mode: z.enum(OPEN_MODES).default("replace").meta({
    description:
      "replace (default): load into the focused document; new_focused / new_tab: a new focused tab; background: a new tab, focus unchanged.",
  }),
  return_html: z
    .preprocess(formBool, z.boolean().default(true))
    .meta({ description: "Include the HTML (default true)." }),
});

/** POST /v1/documents/upload-base64. */
export const UploadDocumentBase64Schema = z
  .object({
    filename: z
      .string()
      .min(1)
      .max(512)
      .meta({ description: "Original file name; the extension picks the converter." }),
    file_base64: base64File,
    session_id: sessionId
      .optional()
      .meta({ description: "Load into this session; without it the file is only converted." }),
    open_mode: z.enum(OPEN_MODES).default("replace"),
    return_html: z.boolean().default(false),
  })
  .register(apiSchemas, { id: "UploadDocumentBase64Request" });

/** Page setup `{size, orientation, margins}` (docx and pdf only). */
const PageSetupSchema = z
  .object({
    size: z.union([z.string(), z.object({ width: z.number(), height: z.number() })]),
    orientation: z.enum(["portrait", "landscape"]),
    margins: z.object({ top: z.number(), right: z.number(), bottom: z.number(), left: z.number() }).nullable(),
  })
  .nullable()
  .register(apiSchemas, { id: "PageSetup" });

/** One roster entry as the upload routes report it. */
export const RosterEntrySchema = z
  .object({
    document_id: z.string().meta({ description: "Session-local slot id." }),
    durable_document_id: z.string().nullable(),
    title: z.string(),
    focused: z.boolean(),
    version_id: z.string().nullable(),
  })
  .register(apiSchemas, { id: "RosterEntry" });

/** Upload result (both forms). `html` per return_html; session fields only when loaded into a session. */
export const UploadDocumentResponseSchema = z
  .object({
    session_id: z.string().optional(),
    document_id: z.string().optional().meta({ description: "Slot id of the loaded document." }),
    durable_document_id: z.string().optional(),
    version_id: z.string().optional(),
    chunks_count: z.number().int().optional(),
    title: z.string(),
    format: z.string().meta({ description: "Detected format: docx, pdf, html, md, txt, rtf." }),
    page_setup: PageSetupSchema,
    html: z.string().optional(),
    roster: z.array(RosterEntrySchema).optional(),
    warnings: z.array(z.string()),
  })
  .register(apiSchemas, { id: "UploadDocumentResponse" });
export type UploadDocumentResponseJson = z.output<typeof UploadDocumentResponseSchema>;

/** Custom margins in inches; no paper is wider than 17 in, so 10 in a side is a generous bound. */
const inches = z.number().min(0).max(10);
const margins = z.object({ top: inches, right: inches, bottom: inches, left: inches });

/** Export options (unshown-parts.md, Export). */
export const ExportOptionsSchema = z
  .object({
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
  })
  .register(apiSchemas, { id: "ExportOptions" });
export type ExportOptionsJson = z.output<typeof ExportOptionsSchema>;

/** Export formats; `doc` is a legacy alias of docx (Versioning 3). */
export const EXPORT_FORMATS = ["docx", "pdf", "html", "markdown", "txt", "doc"] as const;

/** POST /v1/documents/export. One source: html, session_id (+ document_id) or upload_id. */
export const ExportRequestSchema = z
  .object({
    html: z.string().max(MAX_DOCUMENT_CHARS).optional().meta({ description: "HTML to export." }),
    session_id: sessionId
      .optional()
      .meta({ description: "Export a document of this session (the focused one by default)." }),
    document_id: z
      .string()
      .max(MAX_ID_CHARS)
      .optional()
      .meta({ description: "Slot or durable id within the session." }),
    upload_id: z.string().max(64).optional().meta({ description: "A pre-signed upload of purpose export-html." }),
    format: z.enum(EXPORT_FORMATS).default("docx"),
    filename: z.string().max(255).optional().meta({ description: "File name without or with extension." }),
    options: ExportOptionsSchema.optional(),
  })
  .register(apiSchemas, { id: "ExportRequest" });
export type ExportRequestJson = z.output<typeof ExportRequestSchema>;

/** Path of GET /v1/media/{media_id}. */
export const MediaPathSchema = z.object({
  media_id: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .meta({ description: "sha256 of the image bytes." }),
});

/** POST /v1/uploads. */
export const CreateUploadSchema = z
  .object({
    filename: z.string().min(1).max(512),
    content_type: z.string().max(255).default("application/octet-stream"),
    size_bytes: z.number().int().min(1).max(104_857_600),
    purpose: z.enum(["document", "attachment", "export-html"]).default("document"),
  })
  .register(apiSchemas, { id: "CreateUploadRequest" });

/** POST /v1/uploads response. */
export const CreateUploadResponseSchema = z
  .object({
    upload_id: z.string(),
    upload_url: z.string().meta({ description: "PUT the file's bytes here (pre-signed, no Authorization header)." }),
    expires_at: z.string().meta({ description: "ISO 8601." }),
    expires_in_seconds: z.number().int(),
    max_size_bytes: z.number().int(),
  })
  .register(apiSchemas, { id: "CreateUploadResponse" });

/** Path of the per-upload routes. */
export const UploadPathSchema = z.object({ upload_id: z.string().max(64) });

/** POST /v1/uploads/{upload_id}/process. */
export const ProcessUploadSchema = z
  .object({
    session_id: sessionId
      .optional()
      .meta({ description: "Load into this session; without it the file is only converted." }),
    parse_mode: z
      .string()
      .max(32)
      .default("auto")
      .meta({ description: "Accepted for compatibility; conversion is by extension." }),
    return_html: z.boolean().default(false),
    open_mode: z.enum(OPEN_MODES).default("replace"),
  })
  .register(apiSchemas, { id: "ProcessUploadRequest" });

/** POST /v1/attachments/upload (multipart). */
export const AttachmentFormSchema = z.object({
  file: uploadedFile,
  session_id: sessionId.optional().meta({ description: "The session; minted when omitted." }),
});

/** POST /v1/attachments/upload-base64. */
export const AttachmentBase64Schema = z
  .object({
    filename: z.string().min(1).max(512),
    file_base64: base64File,
    session_id: sessionId.optional(),
  })
  .register(apiSchemas, { id: "AttachmentUploadBase64Request" });

/** Attachment upload reply: the attachment_processing job. */
export const AttachmentJobSchema = z
  .object({
    job_id: z.string().meta({ description: "att_…; also the attachment id." }),
    attachment_id: z.string(),
    session_id: z.string(),
    filename: z.string(),
    status: z.enum(["pending", "processing", "completed", "failed"]),
    message: z.string(),
  })
  .register(apiSchemas, { id: "AttachmentJob" });

/** One attachment's status (interface-spec, Attachment status). */
export const AttachmentStatusSchema = z
  .object({
    attachment_id: z.string(),
    job_id: z.string(),
    filename: z.string(),
    status: z.enum(["pending", "processing", "completed", "failed"]),
    kind: z.enum(["document", "image"]),
    content_type: z.string(),
    size_bytes: z.number().int(),
    text_length: z.number().int().nullable().meta({ description: "Characters extracted; null until completed." }),
    chunk_count: z.number().int().nullable().meta({ description: "Chunks extracted; null until completed." }),
    error: z.string().nullable().meta({ description: "Actionable message when failed." }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .register(apiSchemas, { id: "AttachmentStatus" });

/** GET /v1/attachments/status/{session_id}. */
export const AttachmentStatusListSchema = z
  .object({ session_id: z.string(), attachments: z.array(AttachmentStatusSchema), total: z.number().int() })
  .register(apiSchemas, { id: "AttachmentStatusList" });

/** Path of DELETE /v1/attachments/{attachment_id}. */
export const AttachmentPathSchema = z.object({ attachment_id: z.string().max(64) });

/** DELETE /v1/attachments/{attachment_id} reply. */
export const AttachmentDeletedSchema = z
  .object({
    attachment_id: z.string(),
    deleted: z.literal(true),
    cancelled: z.boolean().meta({ description: "True when processing was still running and was stopped." }),
  })
  .register(apiSchemas, { id: "AttachmentDeleted" });

/** POST /v1/templates/upload-base64. */
export const TemplateUploadSchema = z
  .object({ filename: z.string().min(1).max(512), file_base64: base64File })
  .register(apiSchemas, { id: "TemplateUploadRequest" });

/** A template. */
export const TemplateSchema = z
  .object({
    template_id: z.string(),
    name: z.string(),
    filename: z.string(),
    title: z.string(),
    format: z.string(),
    html_bytes: z.number().int(),
    scope: z.enum(["user", "organization"]),
    created_at: z.string(),
  })
  .register(apiSchemas, { id: "Template" });

/** GET /v1/templates. */
export const TemplateListSchema = z
  .object({ templates: z.array(TemplateSchema), total: z.number().int() })
  .register(apiSchemas, { id: "TemplateList" });

/** Path of DELETE /v1/templates/{template_id}. */
export const TemplatePathSchema = z.object({ template_id: z.string().max(64) });

/** DELETE /v1/templates/{template_id} reply. */
export const TemplateDeletedSchema = z
  .object({ template_id: z.string(), deleted: z.literal(true) })
  .register(apiSchemas, { id: "TemplateDeleted" });

/** POST /v1/documents/export/email-request. */
export const EmailExportSchema = z
  .object({
    session_id: sessionId,
    document_id: z.string().max(MAX_ID_CHARS).optional(),
    format: z.enum(EXPORT_FORMATS).default("docx"),
    options: ExportOptionsSchema.optional(),
    filename: z.string().max(255).optional(),
    recipient_email: z
      .string()
      .max(320)
      .optional()
      .meta({ description: "Default: the caller's user id when it is an email." }),
  })
  .register(apiSchemas, { id: "EmailExportRequest" });

/** Email export reply. */
export const EmailExportResponseSchema = z
  .object({
    job_id: z.string(),
    recipient_email: z.string(),
    status: z.literal("queued"),
    eta: z.string().meta({ description: "ISO 8601." }),
    message: z.string(),
  })
  .register(apiSchemas, { id: "EmailExportResponse" });

/** POST /v1/downloads. */
export const DownloadRequestSchema = z
  .object({
    session_id: sessionId.optional(),
    document_id: z.string().max(MAX_ID_CHARS).optional(),
    html: z.string().max(MAX_DOCUMENT_CHARS).optional(),
    upload_id: z.string().max(64).optional(),
    format: z.enum(EXPORT_FORMATS).default("docx"),
    filename: z.string().max(255).optional(),
    options: ExportOptionsSchema.optional(),
  })
  .register(apiSchemas, { id: "DownloadRequest" });

/** POST /v1/downloads reply. */
export const DownloadResponseSchema = z
  .object({
    download_url: z.string(),
    expires_at: z.string(),
    expires_in_seconds: z.number().int(),
    filename: z.string(),
    format: z.string(),
  })
  .register(apiSchemas, { id: "DownloadResponse" });
