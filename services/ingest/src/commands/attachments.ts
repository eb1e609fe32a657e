// Attachments (interface-spec, Attachment status; unshown-parts.md, Attachments): files a session
// keeps next to its documents for the agent to search and quote. Stored in the object store,
// processed in the background (workers/attachment-processor.ts), extracted text kept per chunk for
// Postgres full-text search. Images are not converted: they go to the model as vision input.
import { InputError, NotFoundError, UnsupportedMediaTypeError } from "@redline/service-kit";
import type { IngestContext } from "../context.js";
import * as store from "../db/store/attachments.js";
import { markAttachmentsRemoved } from "../db/store/retention.js";
import type { AttachmentRow } from "../db/tables.js";
import { CONTENT_TYPE_BY_EXTENSION, extensionOf, SUPPORTED_EXTENSIONS, type SupportedExtension } from "../formats.js";
import { requireStorage } from "../storage.js";
import { checkSize, newId } from "./shared.js";
import { getUpload, readUpload } from "./uploads.js";

const IMAGE_TYPES: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
};
/** Extensions an attachment may have: the document formats and png/jpg/gif/webp. */
export const ATTACHMENT_EXTENSIONS = [...SUPPORTED_EXTENSIONS, ...Object.keys(IMAGE_TYPES)];
// Vision input per turn: a few images of bounded size keep the request within provider limits.
const MAX_VISION_IMAGES = 4;
const MAX_VISION_BYTES = 5 * 1024 * 1024;

/** A new attachment: its bytes inline, or an upload id (the upload's filename when none is given). */
export interface NewAttachment {
  sessionId: string;
  filename: string;
  content: Buffer;
  uploadId: string;
}

/** The file's name and bytes, from the upload when there is one. */
async function attachmentFile(ctx: IngestContext, ownerId: string, req: NewAttachment, requestId: string) {
  if (!req.uploadId) return { name: req.filename, content: req.content };
  // A document or export-html slot was sized and checked for another use (100 MB, no images):
  // refused before its bytes are read.
  const slot = await getUpload(ctx, ownerId, req.uploadId);
  if (slot.purpose !== "attachment") {
    throw new InputError(`Upload ${req.uploadId} has purpose ${slot.purpose}, not attachment`);
  }
  const upload = await readUpload(ctx, ownerId, req.uploadId, requestId);
  return { name: req.filename || upload.row.filename, content: upload.bytes };
}

/**
 * Stores an attachment and schedules its processing. UnsupportedMediaTypeError (415, the detail
 * lists ATTACHMENT_EXTENSIONS), PayloadTooLargeError (413) over the attachment cap (50 MB),
 * InputError (400) for a missing or long filename or an empty file.
 */
export async function createAttachment(
  ctx: IngestContext,
  ownerId: string,
  req: NewAttachment,
  requestId: string,
): Promise<AttachmentRow> {
  const { name, content } = await attachmentFile(ctx, ownerId, req, requestId);
  const filename = name.split(/[\\/]/).pop()?.trim() ?? "";
  if (!filename) throw new InputError("filename is required: its extension says what the attachment is");
  if (filename.length > 512) throw new InputError("filename is longer than 512 characters");
  const ext = extensionOf(filename);
  if (!ATTACHMENT_EXTENSIONS.includes(ext)) throw new UnsupportedMediaTypeError(ext, ATTACHMENT_EXTENSIONS);
  checkSize(ctx, content.length, ctx.maxAttachmentBytes, requestId);
  if (content.length === 0) throw new InputError("The attachment is empty");
  const storage = requireStorage(ctx);
  const id = newId("att");
  const contentType =
    IMAGE_TYPES[ext] ?? CONTENT_TYPE_BY_EXTENSION[ext as SupportedExtension] ?? "application/octet-stream";
  const key = `attachments/${id}`;
  await storage.store.put(key, content, contentType);
  const row = await store.insertAttachment(storage.db, {
    id,
    owner_id: ownerId,
    session_id: req.sessionId,
    filename,
    content_type: contentType,
    kind: IMAGE_TYPES[ext] ? "image" : "document",
    size_bytes: content.length,
    object_key: key,
    status: "pending",
  });
  ctx.attachments.schedule(id);
  return row;
}

/** The session's attachments of the owner, oldest first. */
export function listAttachments(ctx: IngestContext, ownerId: string, sessionId: string): Promise<AttachmentRow[]> {
  return store.listAttachments(requireStorage(ctx).db, ownerId, sessionId);
}

/** One live attachment of the owner; NotFoundError (404) otherwise. */
export async function getAttachment(ctx: IngestContext, ownerId: string, id: string): Promise<AttachmentRow> {
  const row = await store.findAttachment(requireStorage(ctx).db, ownerId, id);
  if (!row) throw new NotFoundError("Attachment not found");
  return row;
}

/**
 * Soft-deletes (cancels processing), drops its text and bytes; returns the row as it was. A store
 * that refuses the removal leaves the bytes to the expired-file sweep (commands/retention.ts).
 */
export async function deleteAttachment(ctx: IngestContext, ownerId: string, id: string): Promise<AttachmentRow> {
  const { db, store: objects } = requireStorage(ctx);
  const row = await getAttachment(ctx, ownerId, id);
  await db.transaction((tx) => store.softDeleteAttachment(tx, row.id));
  await objects
    .remove(row.object_key)
    .then(() => markAttachmentsRemoved(db, [row.id]))
    .catch((err: unknown) => ctx.log.warn({ err, attachmentId: row.id }, "attachment bytes left to the sweep"));
  return row;
}

/** A search over one session's attachments; `limit` is clamped to 1..50 (0: 5). */
export interface AttachmentSearch extends store.AttachmentScope {
  query: string;
  limit: number;
}

/**
 * Websearch-syntax full-text search over the session's completed attachments ('simple'
 * configuration: no stemming, any language), best rank first; with an empty query, the first
 * passages. Also returns the session's image attachments (base64) for vision input and the
 * number of completed attachments.
 */
export async function searchAttachments(ctx: IngestContext, search: AttachmentSearch) {
  const { db, store: objects } = requireStorage(ctx);
  const limit = Math.min(50, Math.max(1, search.limit || 5));
  // Independent reads, run together: a chat turn waits on this call before its engine starts.
  const [passages, attachmentCount, images] = await Promise.all([
    store.searchPassages(db, search, search.query.trim(), limit),
    store.countCompleted(db, search),
    store.visionImages(db, search, MAX_VISION_BYTES, MAX_VISION_IMAGES),
  ]);
  const withData = await Promise.all(
    images.map(async (row) => ({ row, base64Data: (await objects.get(row.object_key)).toString("base64") })),
  );
  return { passages, images: withData, attachmentCount };
}
