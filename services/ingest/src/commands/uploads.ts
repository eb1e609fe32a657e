// Pre-signed uploads (unshown-parts.md): a slot with a PUT URL valid 300 s, then the object is
// read back and converted. Expired, unknown or another owner's uploads are 404.
import type { ingestFilesV1, ingestV1 } from "@redline/grpc-stubs";
import {
  type CallContext,
  InputError,
  NotFoundError,
  PayloadTooLargeError,
  requirePrincipal,
} from "@redline/service-kit";
import { type FilesContext, newId, requireStorage } from "../context.js";
import { convertDocument } from "../convert.js";
import type { UploadRow } from "../db/tables.js";
import type { ExportScan } from "../export/export-worker.js";
import { FORMATS_WITH_PARTS, formatForFilename, TooManyElementsError } from "../formats.js";
import { seconds } from "../sandbox/pool.js";
import { extractMedia } from "./media.js";

/** Seconds a pre-signed upload URL is valid (unshown-parts.md). */
export const UPLOAD_TTL_SECONDS = 300;
/** Largest pre-signed upload (unshown-parts.md: size_bytes ≤ 104857600). */
export const MAX_PRESIGNED_BYTES = 104_857_600;
const PURPOSES = ["document", "attachment", "export-html"] as const;
const MB = 1024 * 1024;
const toMb = (n: number) => Math.round((n / MB) * 100) / 100;

/** FilesService.CreateUpload: validates purpose, extension (415) and size (413), records the slot, signs a PUT URL. */
export function createUploadHandler(ctx: FilesContext) {
  return async (
    req: ingestFilesV1.CreateUploadRequest,
    call: CallContext,
  ): Promise<ingestFilesV1.CreateUploadResponse> => {
    const principal = requirePrincipal(call);
    const storage = requireStorage(ctx);
    if (!(PURPOSES as readonly string[]).includes(req.purpose))
      throw new InputError("purpose must be document, attachment or export-html");
    if (req.purpose === "document") formatForFilename(req.filename);
    const max = Math.min(
      MAX_PRESIGNED_BYTES,
      req.purpose === "attachment" ? ctx.maxAttachmentBytes : ctx.maxUploadBytes,
    );
    if (req.sizeBytes > max)
      throw new PayloadTooLargeError(toMb(req.sizeBytes), toMb(max), ctx.supportEmail, call.requestId);
    const id = newId("upl");
    const key = `uploads/${id}`;
    const expiresAt = new Date(Date.now() + UPLOAD_TTL_SECONDS * 1000);
    await storage.db<UploadRow>("uploads").insert({
      id,
      owner_id: principal.ownerId,
      filename: req.filename,
      content_type: req.contentType || "application/octet-stream",
      size_bytes: req.sizeBytes,
      purpose: req.purpose,
      object_key: key,
      expires_at: expiresAt,
    });
    return {
      uploadId: id,
      uploadUrl: await storage.store.presignUpload(key, UPLOAD_TTL_SECONDS),
      expiresAt,
      expiresInSeconds: UPLOAD_TTL_SECONDS,
      maxSizeBytes: max,
    };
  };
}

/** The caller's live upload with its bytes; 404 when unknown, expired or never PUT; 413 when the PUT was too big. */
export async function readUpload(
  ctx: FilesContext,
  ownerId: string,
  uploadId: string,
  requestId: string,
): Promise<{ row: UploadRow; bytes: Buffer }> {
  const storage = requireStorage(ctx);
  const row = await storage.db<UploadRow>("uploads").where({ id: uploadId, owner_id: ownerId }).first();
  if (!row || row.expires_at.getTime() < Date.now()) throw new NotFoundError("Upload not found or expired");
  let size: number;
  try {
    size = (await storage.store.client.statObject(storage.store.bucket, row.object_key)).size;
  } catch {
    throw new NotFoundError("Nothing was uploaded to this upload_id yet: PUT the file to upload_url first");
  }
  const max = Math.min(MAX_PRESIGNED_BYTES, row.purpose === "attachment" ? ctx.maxAttachmentBytes : ctx.maxUploadBytes);
  if (size > max) throw new PayloadTooLargeError(toMb(size), toMb(max), ctx.supportEmail, requestId);
  return { row, bytes: await storage.store.get(row.object_key) };
}

/**
 * FilesService.ConvertUpload: reads the upload and converts it (export-html: the HTML as sent),
 * sanitized either way, in the converter pool. Over `limits.maxElements` elements: 413 (rule 5
 * shape, detail naming the count and the limit).
 */
export function convertUploadHandler(ctx: FilesContext) {
  return async (
    req: ingestFilesV1.ConvertUploadRequest,
    call: CallContext,
  ): Promise<ingestFilesV1.ConvertUploadResponse> => {
    const principal = requirePrincipal(call);
    const { row, bytes } = await readUpload(ctx, principal.ownerId, req.uploadId, call.requestId);
    let converted: ingestV1.ConvertDocumentResponse;
    const tooLarge = (err: unknown): never => {
      throw err instanceof TooManyElementsError
        ? err.asRequestTooLarge(bytes.length, ctx.maxUploadBytes, ctx.supportEmail, call.requestId)
        : err;
    };
    if (row.purpose === "export-html") {
      const { timeoutMs } = ctx.limits;
      const scan = await ctx.pool
        .runTask<ExportScan>(
          { kind: "export-scan", html: bytes.toString("utf8"), maxElements: ctx.limits.maxElements },
          {
            timeoutMs,
            onTimeout: () => new InputError(`The HTML took longer than ${seconds(timeoutMs)} s to read; split it`),
            onOutOfMemory: (mb) => new InputError(`The HTML needs more than ${mb} MB of memory to read; split it`),
          },
        )
        .catch(tooLarge);
      converted = { html: scan.html, title: "", pageSetupJson: "", warnings: [], format: "html", partsFromFile: false };
    } else {
      const result = await convertDocument(row.filename, bytes, ctx.limits, ctx.pool).catch(tooLarge);
      converted = {
        html: await extractMedia(requireStorage(ctx), principal.ownerId, result.html, result.warnings),
        title: result.title,
        pageSetupJson: result.pageSetup ? JSON.stringify(result.pageSetup) : "",
        warnings: result.warnings,
        format: result.format,
        partsFromFile: FORMATS_WITH_PARTS.has(result.format),
      };
    }
    return { converted, filename: row.filename, purpose: row.purpose };
  };
}
