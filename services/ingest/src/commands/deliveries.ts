// Export deliveries (unshown-parts.md, Export): a download link valid 15 minutes, and the email
// fallback for exports over the format cap: queued, built in the background, stored in the object
// store and mailed as a link valid 7 days. Stored exports are never capped (the cap protects
// the synchronous response) and never billed.
import type { ingestFilesV1 } from "@redline/grpc-stubs";
import { type CallContext, InputError, requirePrincipal } from "@redline/service-kit";
import { type FilesContext, newId, publicUrl, requireStorage } from "../context.js";
import { escapeHtml } from "../converters/html-util.js";
import type { ExportRow } from "../db/tables.js";
import { exportDocument } from "../export/export-document.js";
import { EXPORT_FORMATS, type ExportedFile, type ExportFormat } from "../export/export-formats.js";
import { exportJobFromRequest } from "../mappers.js";
import { EMAIL_EXPORT_SUBJECT, insertWithinEmailCap, safeExportFilename } from "./email-limits.js";
import { mediaResolver } from "./media.js";

/** Seconds a download link is valid. */
export const DOWNLOAD_TTL_SECONDS = 900;
/** Seconds a mailed link is valid (7 days, also the longest S3 pre-signature). */
export const EMAIL_LINK_TTL_SECONDS = 7 * 24 * 3600;
/** One plain address: no display name, comma, angle bracket or quote that a mailer could read as more. */
const EMAIL =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z][A-Za-z0-9-]{0,62}$/;
const MAX_EMAIL_CHARS = 254;

// Stored exports are the fallback for documents too big to send: more elements and more time.
const STORED_FACTOR = 4;

/**
 * Exports without the size cap (the file is stored, not sent in the response); the source is
 * sanitized, and bounded at STORED_FACTOR times the direct export's elements and time (cut to
 * `deadline` when a caller waits).
 */
async function exportUncapped(
  ctx: FilesContext,
  ownerId: string,
  req: ingestFilesV1.ExportDocumentRequest,
  deadline?: Date | null,
): Promise<{ file: ExportedFile; format: ExportFormat }> {
  const job = exportJobFromRequest(req);
  const unlimited = Object.fromEntries(EXPORT_FORMATS.map((f) => [f, Number.MAX_SAFE_INTEGER])) as Record<
    ExportFormat,
    number
  >;
  const file = await exportDocument(job, {
    maxBytes: unlimited,
    supportEmail: ctx.supportEmail,
    resolveImage: mediaResolver(ctx, ownerId),
    chromiumPath: ctx.chromiumPath,
    pool: ctx.pool,
    maxElements: ctx.limits.maxElements * STORED_FACTOR,
    timeoutMs: Math.max(
      1,
      Math.min(ctx.limits.exportTimeoutMs * STORED_FACTOR, (deadline?.getTime() ?? Infinity) - Date.now() - 500),
    ),
    stored: true,
  });
  return { file, format: job.format };
}

/** Stores a file and signs a GET link that downloads it under `filename`. */
async function storeAndSign(
  ctx: FilesContext,
  key: string,
  file: ExportedFile,
  filename: string,
  ttlSeconds: number,
): Promise<string> {
  const { store } = requireStorage(ctx);
  await store.put(key, file.bytes, file.contentType);
  // Signed overrides: the store serves it as an attachment under a sanitized name.
  const url = await store.presignDownload(key, ttlSeconds, { filename, contentType: file.contentType });
  return publicUrl(ctx, url);
}

/** FilesService.CreateDownload: export now, store, sign a 15-minute link. */
export function createDownloadHandler(ctx: FilesContext) {
  return async (
    req: ingestFilesV1.CreateDownloadRequest,
    call: CallContext,
  ): Promise<ingestFilesV1.CreateDownloadResponse> => {
    const principal = requirePrincipal(call);
    const { db } = requireStorage(ctx);
    const { file, format } = await exportUncapped(ctx, principal.ownerId, req.export ?? emptyExport(), call.deadline);
    const filename = safeExportFilename(req.filename, format);
    const id = newId("dl");
    const key = `exports/${id}${file.extension}`;
    const url = await storeAndSign(ctx, key, file, filename, DOWNLOAD_TTL_SECONDS);
    await db<ExportRow>("exports").insert({
      id,
      owner_id: principal.ownerId,
      kind: "download",
      format,
      filename,
      status: "stored",
      object_key: key,
    });
    return {
      downloadUrl: url,
      expiresAt: new Date(Date.now() + DOWNLOAD_TTL_SECONDS * 1000),
      expiresInSeconds: DOWNLOAD_TTL_SECONDS,
      filename,
      format,
    };
  };
}

function emptyExport(): ingestFilesV1.ExportDocumentRequest {
  return { html: "", format: "docx", title: "", pageSetupJson: "", options: undefined };
}

/**
 * FilesService.QueueEmailExport: 400 for a malformed recipient; 429 with Retry-After when the
 * account sent ctx.emailExportsPerHour in the last hour; records the job as queued and answers
 * at once; the export, upload and mail happen in the background (status sent | failed). The
 * filename is sanitized (safeExportFilename) and the subject is fixed.
 */
export function queueEmailExportHandler(ctx: FilesContext) {
  return async (
    req: ingestFilesV1.QueueEmailExportRequest,
    call: CallContext,
  ): Promise<ingestFilesV1.QueueEmailExportResponse> => {
    const principal = requirePrincipal(call);
    const { db } = requireStorage(ctx);
    const recipient = req.recipientEmail.trim();
    if (recipient.length > MAX_EMAIL_CHARS || !EMAIL.test(recipient))
      throw new InputError("recipient_email is not a valid email address");
    const exportReq = req.export ?? emptyExport();
    // Validates the format and options now, so the caller gets the 422 instead of a failed mail.
    const { format } = exportJobFromRequest(exportReq);
    const filename = safeExportFilename(req.filename, format);
    const id = newId("exp");
    await insertWithinEmailCap(
      db,
      {
        id,
        owner_id: principal.ownerId,
        session_id: req.sessionId,
        format: exportReq.format,
        filename,
        recipient_email: recipient,
      },
      ctx.emailExportsPerHour,
    );
    setImmediate(() => {
      void deliver(ctx, principal.ownerId, id, exportReq, filename, recipient);
    });
    return { jobId: id, recipientEmail: recipient, status: "queued", eta: new Date(Date.now() + 60_000) };
  };
}

async function deliver(
  ctx: FilesContext,
  ownerId: string,
  id: string,
  req: ingestFilesV1.ExportDocumentRequest,
  filename: string,
  recipient: string,
): Promise<void> {
  const { db } = requireStorage(ctx);
  try {
    const { file } = await exportUncapped(ctx, ownerId, req);
    const key = `exports/${id}${file.extension}`;
    const url = await storeAndSign(ctx, key, file, filename, EMAIL_LINK_TTL_SECONDS);
    const expires = new Date(Date.now() + EMAIL_LINK_TTL_SECONDS * 1000).toUTCString();
    await ctx.mailer.send({
      to: recipient,
      subject: EMAIL_EXPORT_SUBJECT,
      text: `Your export "${filename}" is ready.\n\nDownload it here (the link is valid for 7 days, until ${expires}):\n${url}\n`,
      html: `<p>Your export <b>${escapeHtml(filename)}</b> is ready.</p><p><a href="${escapeHtml(url)}">Download it</a> (the link is valid for 7 days, until ${escapeHtml(expires)}).</p>`,
    });
    await db("exports").where({ id }).update({ status: "sent", object_key: key, updated_at: db.fn.now() });
  } catch (err) {
    ctx.log.error({ err, exportId: id }, "email export failed");
    const message = err instanceof Error ? err.message.slice(0, 500) : String(err);
    await db("exports")
      .where({ id })
      .update({ status: "failed", error: message, updated_at: db.fn.now() })
      .catch(() => undefined);
  }
}
