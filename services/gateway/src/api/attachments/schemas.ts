// Chat attachments (interface-spec endpoint 23; unshown-parts.md, Uploads): upload, status and delete.
import { z } from "zod";
import { base64File, component, sessionId, uploadedFile } from "../shared/schemas.js";

/** POST /v1/attachments/upload (multipart). */
export const AttachmentFormSchema = z.object({
  file: uploadedFile,
  session_id: sessionId.optional().meta({ description: "The session; minted when omitted." }),
});

/** POST /v1/attachments/upload-base64. */
export const AttachmentBase64Schema = component("AttachmentUploadBase64Request", {
  filename: z.string().min(1).max(512),
  file_base64: base64File,
  session_id: sessionId.optional(),
});

/** Attachment upload reply: the attachment_processing job. */
export const AttachmentJobSchema = component("AttachmentJob", {
  job_id: z.string().meta({ description: "att_…; also the attachment id." }),
  attachment_id: z.string(),
  session_id: z.string(),
  filename: z.string(),
  status: z.enum(["pending", "processing", "completed", "failed"]),
  message: z.string(),
});

/** One attachment's status (interface-spec, Attachment status). */
export const AttachmentStatusSchema = component("AttachmentStatus", {
  attachment_id: z.string(),
  job_id: z.string(),
  filename: z.string(),
  status: z.enum(["pending", "processing", "completed", "failed"]),
  kind: z.enum(["document", "image"]),
  content_type: z.string(),
  size_bytes: z.number().int(),
  text_length: z.number().int().nullable().meta({ description: "Characters extracted; null until completed." }),
  chunk_count: z.number().int().nullable().meta({ description: "Chunks extracted; null until completed." }),
  error: z.string().optional().meta({ description: "Actionable message; only when failed." }),
  created_at: z.string(),
  updated_at: z.string(),
});

/** GET /v1/attachments/status/{session_id}. */
export const AttachmentStatusListSchema = component("AttachmentStatusList", {
  session_id: z.string(),
  attachments: z.array(AttachmentStatusSchema),
  total: z.number().int(),
});

/** Path of DELETE /v1/attachments/{attachment_id}. */
export const AttachmentPathSchema = z.object({ attachment_id: z.string().max(64) });

/** DELETE /v1/attachments/{attachment_id} reply. */
export const AttachmentDeletedSchema = component("AttachmentDeleted", {
  attachment_id: z.string(),
  deleted: z.literal(true),
  cancelled: z.boolean().meta({ description: "True when processing was still running and was stopped." }),
});
