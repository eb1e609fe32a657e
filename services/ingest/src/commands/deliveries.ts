// Export deliveries (unshown-parts.md, Export): a download link valid 15 minutes, and the email
// fallback for exports over the format cap: queued, built in the background, stored in the object
// store and mailed as a link valid 7 days. Stored exports are never capped (the cap protects
// the synchronous response) and never billed.
import type { ingestFilesV1 } from "@redline/grpc-stubs";
import { type CallOpts, InputError, isEmailAddress, UnavailableError } from "@redline/service-kit";
import type { IngestContext } from "../context.js";
import { insertExport, updateExportStatus } from "../db/store/exports.js";
import type { ExportedFile, ExportJob } from "../export/export-formats.js";
import { escapeHtml } from "../html/util.js";
import { requireStorage } from "../storage.js";
import { EMAIL_EXPORT_SUBJECT, insertWithinEmailCap, safeExportFilename } from "./email-limits.js";
import { type ExportCaller, exportForCaller, withSource } from "./exports.js";
import { newId, publicUrl } from "./shared.js";

/** Seconds a download link is valid. */
export const DOWNLOAD_TTL_SECONDS = 900;
/** Seconds a mailed link is valid (7 days, also the longest S3 pre-signature). */
export const EMAIL_LINK_TTL_SECONDS = 7 * 24 * 3600;
/** The 400 detail of an email export with no recipient_email and no email on file: how to set one. */
export const NO_EMAIL_ON_FILE =
  'recipient_email is missing and this account has no email on file: set one with PATCH /v1/users/me {"email": "you@example.com"}, or send recipient_email';
/** The 400 detail when the email on file is not verified yet: only a proven address gets mail by default. */
export const EMAIL_NOT_VERIFIED =
  "recipient_email is missing and the email on file is not verified: send the mailed code to POST /v1/users/me/email/verify, or send recipient_email";

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
  /** Empty: the caller's email on file. */
  recipientEmail: string;
  filename: string;
  requestedFormat: string;
}

/** Who asks for an email export: the owner of its row, and the call options that reach billing as them. */
export interface EmailCaller {
  ownerId: string;
  fwd: CallOpts;
}

/**
 * The address to mail: the request's (InputError 400 when malformed), else the caller's email on
 * file in billing once verified (InputError 400 with code no_email_on_file, whose detail says how
 * to set one, when there is none; code email_not_verified while it is unverified; UnavailableError
 * 503 when this ingest has no billing address).
 */
async function recipientOf(ctx: IngestContext, caller: EmailCaller, requested: string): Promise<string> {
  const given = requested.trim();
  if (given) {
    if (!isEmailAddress(given)) throw new InputError("recipient_email is not a valid email address");
    return given;
  }
  if (!ctx.accounts) throw new UnavailableError("Billing is not configured for the ingest service (BILLING_ADDR)");
  const { account } = await ctx.accounts.getUserAccount({}, caller.fwd);
  const onFile = account?.email ?? "";
  if (!onFile) throw new InputError(NO_EMAIL_ON_FILE, { code: "no_email_on_file" });
  if (!account?.emailVerifiedAt) throw new InputError(EMAIL_NOT_VERIFIED, { code: "email_not_verified" });
  return onFile;
}

/**
 * Queues an email export of the job `toJob` builds, to `req.recipientEmail` or, when empty, the
 * caller's email on file (recipientOf: 400 malformed or none on file). EmailExportLimitError
 * (429 with Retry-After) when the account sent ctx.emailExportsPerHour in the last hour. The
 * export, upload and mail happen in the background (status sent | failed). The filename is
 * sanitized (safeExportFilename) and the subject is fixed. `source`: the document's original,
 * written back in place when it is the caller's and of the job's format (withSource).
 */
export async function queueEmailExport(
  ctx: IngestContext,
  caller: EmailCaller,
  req: EmailExport,
  toJob: () => ExportJob,
  source?: ingestFilesV1.ExportSource,
) {
  const { db } = requireStorage(ctx);
  const { ownerId } = caller;
  const recipient = await recipientOf(ctx, caller, req.recipientEmail);
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
    void deliver(ctx, ownerId, id, job, filename, recipient, source);
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
  source?: ingestFilesV1.ExportSource,
): Promise<void> {
  const { db } = requireStorage(ctx);
  // Recorded on failure too, so the expired-file sweep removes a file whose mail failed.
  let stored = "";
  try {
    // The original (export in place) is read here, off the request's path.
    const file = await exportForCaller(ctx, { ownerId }, await withSource(ctx, ownerId, job, source), true);
    const { key, url } = await storeAndSign(ctx, id, file, filename, EMAIL_LINK_TTL_SECONDS);
    stored = key;
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
    await updateExportStatus(db, id, { status: "failed", error, object_key: stored }).catch(() => undefined);
  }
}
