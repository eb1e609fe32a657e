// Export deliveries (unshown-parts.md, Export): a download link valid 15 minutes, and the email
// fallback for exports over the format cap: queued, built in the background, stored in the object
// store and mailed as a link valid 7 days. Stored exports are never capped (the cap protects
// the synchronous response) and never billed.
import { InputError } from "@redline/service-kit";
import type { IngestContext } from "../context.js";
import { escapeHtml } from "../converters/html-util.js";
import { insertExport, updateExportStatus } from "../db/store/exports.js";
import type { ExportedFile, ExportJob } from "../export/export-formats.js";
import { EMAIL_EXPORT_SUBJECT, insertWithinEmailCap, safeExportFilename } from "./email-limits.js";
import { type ExportCaller, exportForCaller } from "./exports.js";
import { newId, publicUrl, requireStorage } from "./shared.js";

/** Seconds a download link is valid. */
export const DOWNLOAD_TTL_SECONDS = 900;
/** Seconds a mailed link is valid (7 days, also the longest S3 pre-signature). */
export const EMAIL_LINK_TTL_SECONDS = 7 * 24 * 3600;
/** One plain address: no display name, comma, angle bracket or quote that a mailer could read as more. */
const EMAIL =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z][A-Za-z0-9-]{0,62}$/;
const MAX_EMAIL_CHARS = 254;

/** Stores a file under `exports/<id><ext>` and signs a GET link that downloads it under `filename`. */
async function storeAndSign(ctx: IngestContext, id: string, file: ExportedFile, filename: string, ttlSeconds: number) {
  const { store } = requireStorage(ctx);
  const key = `exports/${id}${file.extension}`;
  await store.put(key, file.bytes, file.contentType);
  // Signed overrides: the store serves it as an attachment under a sanitized name.
  const url = await store.presignDownload(key, ttlSeconds, { filename, contentType: file.contentType });
  return { key, url: publicUrl(ctx, url) };
}

/** Exports now (no size cap), stores the file and signs a 15-minute link; errors of exportForCaller. */
export async function createDownload(ctx: IngestContext, caller: ExportCaller, job: ExportJob, requested: string) {
  const { db } = requireStorage(ctx);
  const file = await exportForCaller(ctx, caller, job, true);
  const filename = safeExportFilename(requested, job.format);
  const id = newId("dl");
  const { key, url } = await storeAndSign(ctx, id, file, filename, DOWNLOAD_TTL_SECONDS);
  await insertExport(db, {
    id,
    owner_id: caller.ownerId,
    kind: "download",
    format: job.format,
    filename,
    status: "stored",
    object_key: key,
  });
  const expiresAt = new Date(Date.now() + DOWNLOAD_TTL_SECONDS * 1000);
  return { downloadUrl: url, expiresAt, expiresInSeconds: DOWNLOAD_TTL_SECONDS, filename, format: job.format };
}

/** An email export request; `requestedFormat` is recorded as the caller spelled it (doc stays doc). */
export interface EmailExport {
  sessionId: string;
  recipientEmail: string;
  filename: string;
  requestedFormat: string;
}

/**
 * Queues an email export of the job `toJob` builds: InputError (400) for a malformed recipient; EmailExportLimitError
 * (429 with Retry-After) when the account sent ctx.emailExportsPerHour in the last hour. The
 * export, upload and mail happen in the background (status sent | failed). The filename is
 * sanitized (safeExportFilename) and the subject is fixed.
 */
export async function queueEmailExport(ctx: IngestContext, ownerId: string, req: EmailExport, toJob: () => ExportJob) {
  const { db } = requireStorage(ctx);
  const recipient = req.recipientEmail.trim();
  if (recipient.length > MAX_EMAIL_CHARS || !EMAIL.test(recipient))
    throw new InputError("recipient_email is not a valid email address");
  // Built after the recipient check (a bad address is the 400 even with a bad format), and
  // before queueing, so the caller gets the format's 422 instead of a failed mail.
  const job = toJob();
  const filename = safeExportFilename(req.filename, job.format);
  const id = newId("exp");
  await insertWithinEmailCap(
    db,
    {
      id,
      owner_id: ownerId,
      session_id: req.sessionId,
      format: req.requestedFormat,
      filename,
      recipient_email: recipient,
    },
    ctx.emailExportsPerHour,
  );
  setImmediate(() => {
    void deliver(ctx, ownerId, id, job, filename, recipient);
  });
  return { jobId: id, recipientEmail: recipient, status: "queued", eta: new Date(Date.now() + 60_000) };
}

async function deliver(
  ctx: IngestContext,
  ownerId: string,
  id: string,
  job: ExportJob,
  filename: string,
  recipient: string,
): Promise<void> {
  const { db } = requireStorage(ctx);
  try {
    const file = await exportForCaller(ctx, { ownerId }, job, true);
    const { key, url } = await storeAndSign(ctx, id, file, filename, EMAIL_LINK_TTL_SECONDS);
    const expires = new Date(Date.now() + EMAIL_LINK_TTL_SECONDS * 1000).toUTCString();
    await ctx.mailer.send({
      to: recipient,
      subject: EMAIL_EXPORT_SUBJECT,
      text: `Your export "${filename}" is ready.\n\nDownload it here (the link is valid for 7 days, until ${expires}):\n${url}\n`,
      html: `<p>Your export <b>${escapeHtml(filename)}</b> is ready.</p><p><a href="${escapeHtml(url)}">Download it</a> (the link is valid for 7 days, until ${escapeHtml(expires)}).</p>`,
    });
    await updateExportStatus(db, id, { status: "sent", object_key: key });
  } catch (err) {
    ctx.log.error({ err, exportId: id }, "email export failed");
    const error = err instanceof Error ? err.message.slice(0, 500) : String(err);
    await updateExportStatus(db, id, { status: "failed", error }).catch(() => undefined);
  }
}
