// Document uploads (unshown-parts.md, Uploads): multipart and base64 uploads with their open
// mode, pre-signed uploads and their processing, and media reads.
import { z } from "zod";
import { AttachmentJobSchema } from "../attachments/schemas.js";
import { apiSchemas, base64File, component, formBool, sessionId, uploadedFile } from "../shared/schemas.js";

/** How an upload opens in the session's roster; `new_tab` is an alias of `new_focused`. */
export const OPEN_MODES = ["replace", "new_focused", "background", "new_tab"] as const;

export type OpenMode = (typeof OPEN_MODES)[number];

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
export const UploadDocumentBase64Schema = component("UploadDocumentBase64Request", {
  filename: z.string().min(1).max(512).meta({ description: "Original file name; the extension picks the converter." }),
  file_base64: base64File,
  session_id: sessionId
    .optional()
    .meta({ description: "Load into this session; without it the file is only converted." }),
  open_mode: z.enum(OPEN_MODES).default("replace"),
  return_html: z.boolean().default(false),
});

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
export const RosterEntrySchema = component("RosterEntry", {
  document_id: z.string().meta({ description: "Session-local slot id." }),
  durable_document_id: z.string().nullable(),
  title: z.string(),
  focused: z.boolean(),
  version_id: z.string().optional(),
});

/** Upload result (both forms). `html` per return_html; session fields only when loaded into a session. */
export const UploadDocumentResponseSchema = component("UploadDocumentResponse", {
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
});

export type UploadDocumentResponseJson = z.output<typeof UploadDocumentResponseSchema>;

/** Path of GET /v1/media/{media_id}. */
export const MediaPathSchema = z.object({
  media_id: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .meta({ description: "sha256 of the image bytes." }),
});

/** POST /v1/uploads. */
export const CreateUploadSchema = component("CreateUploadRequest", {
  filename: z.string().min(1).max(512),
  content_type: z.string().max(255).default("application/octet-stream"),
  size_bytes: z.number().int().min(1).max(104_857_600),
  purpose: z.enum(["document", "attachment", "export-html"]).default("document"),
});

/** POST /v1/uploads response. */
export const CreateUploadResponseSchema = component("CreateUploadResponse", {
  upload_id: z.string(),
  upload_url: z.string().meta({ description: "PUT the file's bytes here (pre-signed, no Authorization header)." }),
  expires_at: z.string().meta({ description: "ISO 8601." }),
  expires_in_seconds: z.number().int(),
  max_size_bytes: z.number().int(),
  curl_example: z.string().meta({
    description: "A shell command that PUTs the file (named as `filename`, in the current directory) to upload_url.",
  }),
});

/** Path of the per-upload routes. */
export const UploadPathSchema = z.object({ upload_id: z.string().max(64) });

/** The parse modes POST /v1/uploads/{upload_id}/process takes. */
export const PARSE_MODES = ["auto"] as const;

/** POST /v1/uploads/{upload_id}/process. */
export const ProcessUploadSchema = component("ProcessUploadRequest", {
  session_id: sessionId
    .optional()
    .meta({ description: "Load into this session; without it the file is only converted." }),
  // The converters have one mode: by the file's extension (Errors: 415 for others). Any other
  // value is a 422 ("Input should be 'auto'"), so a client asking for a mode we do not have is
  // told so rather than silently ignored.
  parse_mode: z
    .enum(PARSE_MODES)
    .default("auto")
    .meta({ description: 'Only "auto": the converter is chosen by the file\'s extension; any other value is a 422.' }),
  return_html: z.boolean().default(false),
  open_mode: z.enum(OPEN_MODES).default("replace"),
});

/** POST /v1/uploads/{upload_id}/process response: by the upload's purpose, a conversion or an attachment job. */
export const ProcessUploadResponseSchema = z
  .union([UploadDocumentResponseSchema, AttachmentJobSchema])
  .meta({
    description:
      "A document upload's conversion (or the loaded document); an attachment upload's attachment_processing job.",
  })
  .register(apiSchemas, { id: "ProcessUploadResponse" });
