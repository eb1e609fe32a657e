// The attachment routes under /v1/attachments.
import { required } from "@redline/service-kit";
import type { z } from "zod";
import { defineRoute, type Route, type RouteCall } from "../../route-registry.js";
import { answers, EXPENSIVE_IDEMPOTENT, endpoint } from "../shared/routes.js";
import { normalizeBase64, SessionPathSchema } from "../shared/schemas.js";
import { attachmentToJson } from "./mappers.js";
import * as schemas from "./schemas.js";

const UPLOAD_TIMEOUT_MS = 60_000;

/** The file of a new attachment: its name and bytes, or a pre-signed upload of purpose attachment. */
export type AttachmentSource = { filename: string; content: Buffer } | { uploadId: string };

/**
 * The attachment_processing job of a file, as the attachment upload routes answer it (also POST
 * /v1/uploads/{id}/process for an attachment upload): ensures the session is the caller's
 * (minting one when omitted, 403 for another owner's), then ingest stores the file (415, 413 and
 * 400 as CreateAttachment; 404 for an upload unknown, expired or never PUT).
 */
export async function createAttachment(
  call: RouteCall,
  sessionId: string,
  source: AttachmentSource,
): Promise<z.output<typeof schemas.AttachmentJobSchema>> {
  const ensured = await call.ctx.sessions.ensureSession({ sessionId }, call.rpc());
  const sid = ensured.session?.sessionId ?? sessionId;
  const file =
    "uploadId" in source
      ? { filename: "", content: Buffer.alloc(0), uploadId: source.uploadId }
      : { ...source, uploadId: "" };
  const res = await call.ctx.files.createAttachment({ sessionId: sid, ...file }, call.rpc(UPLOAD_TIMEOUT_MS));
  const a = required(res.attachment, "attachment");
  return {
    job_id: a.attachmentId,
    attachment_id: a.attachmentId,
    session_id: sid,
    filename: a.filename,
    status: "processing",
    message: `Processing ${a.filename}; poll GET /v1/attachments/status/${sid} until it is completed.`,
  };
}

/** POST /v1/attachments/upload (multipart `file`, `session_id`). */
export const uploadAttachmentRoute = defineRoute({
  ...endpoint(
    "POST /v1/attachments/upload",
    "uploadAttachment",
    "Attach a file to a session (multipart)",
    "attachments",
    EXPENSIVE_IDEMPOTENT,
  ),
  description:
    "Documents (.pdf .docx .txt .rtf .md .html .htm) are converted and their text indexed for the agent; images " +
    "(.png .jpg .jpeg .gif .webp) go to the model as vision input. At most 50 MB. Processing runs in the background.",
  request: { body: schemas.AttachmentFormSchema },
  bodyMediaType: "multipart/form-data",
  ...answers(schemas.AttachmentJobSchema, "The attachment_processing job.", [400, 403, 415, 503]),
  async handle({ body }, call) {
    const file = { filename: body.file.filename, content: body.file.content };
    return { body: await createAttachment(call, body.session_id ?? "", file) };
  },
});

/** POST /v1/attachments/upload-base64 `{filename, file_base64, session_id?}`. */
export const uploadAttachmentBase64Route = defineRoute({
  ...endpoint(
    "POST /v1/attachments/upload-base64",
    "uploadAttachmentBase64",
    "Attach a file to a session (base64)",
    "attachments",
    EXPENSIVE_IDEMPOTENT,
  ),
  request: { body: schemas.AttachmentBase64Schema },
  ...answers(schemas.AttachmentJobSchema, "The attachment_processing job.", [400, 403, 415, 503]),
  async handle({ body }, call) {
    const content = Buffer.from(normalizeBase64(body.file_base64), "base64");
    return { body: await createAttachment(call, body.session_id ?? "", { filename: body.filename, content }) };
  },
});

/** GET /v1/attachments/status/{session_id} (endpoint 23). */
export const attachmentStatusRoute = defineRoute({
  ...endpoint(
    "GET /v1/attachments/status/{session_id}",
    "getAttachmentStatus",
    "Attachment processing status",
    "attachments",
  ),
  request: { params: SessionPathSchema },
  ...answers(schemas.AttachmentStatusListSchema, "Each attachment's processing state.", [404, 503]),
  async handle({ params }, call) {
    // 404 for an unknown session or another owner's, before anything is listed.
    await call.ctx.sessions.getSession({ sessionId: params.session_id }, call.rpc());
    const res = await call.ctx.files.listAttachments({ sessionId: params.session_id }, call.rpc());
    const attachments = res.attachments.map(attachmentToJson);
    return { body: { session_id: params.session_id, attachments, total: attachments.length } };
  },
});

/** DELETE /v1/attachments/{attachment_id}: cancels processing or removes the attachment. */
export const deleteAttachmentRoute = defineRoute({
  ...endpoint(
    "DELETE /v1/attachments/{attachment_id}",
    "deleteAttachment",
    "Cancel or remove an attachment",
    "attachments",
  ),
  request: { params: schemas.AttachmentPathSchema },
  ...answers(schemas.AttachmentDeletedSchema, "The attachment is gone from its session.", [404, 503]),
  async handle({ params }, call) {
    const res = await call.ctx.files.deleteAttachment({ attachmentId: params.attachment_id }, call.rpc());
    const status = res.attachment?.status ?? "";
    return {
      body: {
        attachment_id: params.attachment_id,
        deleted: true as const,
        cancelled: status === "pending" || status === "processing",
      },
    };
  },
});

/** The attachments routes, in documentation order (api/index.ts mounts every area's list). */
export const attachmentsRoutes: Route[] = [
  uploadAttachmentRoute,
  uploadAttachmentBase64Route,
  attachmentStatusRoute,
  deleteAttachmentRoute,
];
