// Pre-signed uploads (unshown-parts.md, Uploads): a slot with a PUT URL valid 300 s, then the
// object is read back and converted. Expired, unknown or another owner's uploads are 404.
import { InputError, NotFoundError, objectStoreUnavailable } from "@redline/service-kit";
import type { IngestContext } from "../context.js";
import { findUpload, insertUpload } from "../db/store/uploads.js";
import type { UploadRow } from "../db/tables.js";
import type { ExportScan } from "../export/export-worker.js";
import type { ConvertResult } from "../formats.js";
import { formatForFilename } from "../formats.js";
import { seconds } from "../sandbox/pool.js";
import { requireStorage } from "../storage.js";
import { type ConvertedForCaller, convertForOwner, tooManyElementsAs413 } from "./conversions.js";
import { checkSize, newId } from "./shared.js";

/** Seconds a pre-signed upload URL is valid (unshown-parts.md). */
export const UPLOAD_TTL_SECONDS = 300;
/** Largest pre-signed upload (unshown-parts.md: size_bytes ≤ 104857600). */
export const MAX_PRESIGNED_BYTES = 104_857_600;
const PURPOSES = ["document", "attachment", "export-html"] as const;

/** What a client asks to upload. */
export interface UploadRequest {
  filename: string;
  contentType: string;
  sizeBytes: number;
  purpose: string;
}

const maxBytesFor = (ctx: IngestContext, purpose: string) =>
  Math.min(MAX_PRESIGNED_BYTES, purpose === "attachment" ? ctx.maxAttachmentBytes : ctx.maxUploadBytes);

/**
 * Records an upload slot (`uploads/<id>`, 300 s) and signs its PUT URL. InputError (400) for an
 * unknown purpose, UnsupportedMediaTypeError (415) for a document of another extension,
 * PayloadTooLargeError (413) over the purpose's cap.
 */
export async function createUpload(ctx: IngestContext, ownerId: string, req: UploadRequest, requestId: string) {
  const storage = requireStorage(ctx);
  if (!(PURPOSES as readonly string[]).includes(req.purpose))
    throw new InputError("purpose must be document, attachment or export-html");
  if (req.purpose === "document") formatForFilename(req.filename);
  const maxSizeBytes = maxBytesFor(ctx, req.purpose);
  checkSize(ctx, req.sizeBytes, maxSizeBytes, requestId);
  const id = newId("upl");
  const key = `uploads/${id}`;
  const expiresAt = new Date(Date.now() + UPLOAD_TTL_SECONDS * 1000);
  await insertUpload(storage.db, {
    id,
    owner_id: ownerId,
    filename: req.filename,
    content_type: req.contentType || "application/octet-stream",
    size_bytes: req.sizeBytes,
    purpose: req.purpose,
    object_key: key,
    expires_at: expiresAt,
  });
  const uploadUrl = await storage.store.presignUpload(key, UPLOAD_TTL_SECONDS);
  return { uploadId: id, uploadUrl, expiresAt, expiresInSeconds: UPLOAD_TTL_SECONDS, maxSizeBytes };
}

/**
 * The caller's live upload slot as recorded, PUT or not (its purpose decides what processing
 * does with it); NotFoundError (404) when unknown, another owner's or expired.
 */
export async function getUpload(ctx: IngestContext, ownerId: string, uploadId: string): Promise<UploadRow> {
  const row = await findUpload(requireStorage(ctx).db, ownerId, uploadId);
  if (!row || row.expires_at.getTime() < Date.now()) throw new NotFoundError("Upload not found or expired");
  return row;
}

/**
 * The caller's live upload with its bytes; 404 when unknown, expired or never PUT; 413 when the
 * PUT was too big; 400 when the stored object is not the declared size_bytes (a PUT cut off
 * half-way, which some S3-compatible stores keep: never processed as if it were the file).
 */
export async function readUpload(
  ctx: IngestContext,
  ownerId: string,
  uploadId: string,
  requestId: string,
): Promise<{ row: UploadRow; bytes: Buffer }> {
  const storage = requireStorage(ctx);
  const row = await getUpload(ctx, ownerId, uploadId);
  let size: number;
  try {
    size = (await storage.store.client.statObject(storage.store.bucket, row.object_key)).size;
  } catch (err) {
    // A store that cannot be reached says nothing about the PUT: 503, not 404.
    throw (
      objectStoreUnavailable(err) ??
      new NotFoundError("Nothing was uploaded to this upload_id yet: PUT the file to upload_url first")
    );
  }
  checkSize(ctx, size, maxBytesFor(ctx, row.purpose), requestId);
  const declared = Number(row.size_bytes);
  if (size !== declared) {
    throw new InputError(
      `The uploaded file is ${size} bytes but size_bytes was ${declared}: the PUT was cut off or sent another file; PUT the whole file to upload_url again`,
    );
  }
  return { row, bytes: await storage.store.get(row.object_key) };
}

/** Sanitizes uploaded HTML in the pool, as an export source is (no converter, no media move). */
async function scanExportHtml(ctx: IngestContext, bytes: Buffer, requestId: string): Promise<ConvertResult> {
  const { timeoutMs, maxElements } = ctx.limits;
  const scan = await ctx.pool
    .runTask<ExportScan>(
      { kind: "export-scan", html: bytes.toString("utf8"), maxElements },
      {
        timeoutMs,
        onTimeout: () => new InputError(`The HTML took longer than ${seconds(timeoutMs)} s to read; split it`),
        onOutOfMemory: (mb) => new InputError(`The HTML needs more than ${mb} MB of memory to read; split it`),
      },
    )
    .catch(tooManyElementsAs413(ctx, bytes.length, requestId));
  return { html: scan.html, title: "", pageSetup: null, warnings: [], format: "html" };
}

/**
 * Reads the upload and converts it (export-html: the HTML as sent), sanitized either way, in the
 * converter pool. Over `limits.maxElements` elements: 413 (rule 5 shape, detail naming the count
 * and the limit). Errors of readUpload and convertDocument otherwise. `keepSource`: see
 * convertForOwner (an export-html upload has no original to keep).
 */
export async function convertUpload(
  ctx: IngestContext,
  ownerId: string,
  uploadId: string,
  requestId: string,
  keepSource = false,
) {
  const { row, bytes } = await readUpload(ctx, ownerId, uploadId, requestId);
  const converted: ConvertedForCaller =
    row.purpose === "export-html"
      ? await scanExportHtml(ctx, bytes, requestId)
      : await convertForOwner(ctx, { filename: row.filename, content: bytes, ownerId, requestId, keepSource });
  return { converted, filename: row.filename, purpose: row.purpose };
}
