// Attachments (interface-spec, Attachment status; unshown-parts.md): files a session keeps next
// to its documents for the agent to search and quote. Stored in the object store, processed in
// the background (pending → processing → completed | failed), extracted text kept per chunk for
// Postgres full-text search. Images are not converted: they go to the model as vision input.
import type { ingestFilesV1 } from "@redline/grpc-stubs";
import {
  type CallContext,
  InputError,
  NotFoundError,
  PayloadTooLargeError,
  RedlineError,
  requirePrincipal,
  UnsupportedMediaTypeError,
} from "@redline/service-kit";
import { type FilesContext, newId, requireStorage } from "../context.js";
import { convertDocument } from "../convert.js";
import type { AttachmentRow } from "../db/tables.js";
import { extensionOf, SUPPORTED_EXTENSIONS } from "../formats.js";
import { seconds } from "../sandbox/pool.js";
import { readUpload } from "./uploads.js";

const IMAGE_TYPES: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
};
/** Extensions an attachment may have: the document formats and png/jpg/gif/webp. */
export const ATTACHMENT_EXTENSIONS = [...SUPPORTED_EXTENSIONS, ...Object.keys(IMAGE_TYPES)];
const DOCUMENT_TYPES: Record<string, string> = {
  ".pdf": "application/pdf",
  ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  ".txt": "text/plain",
  ".rtf": "application/rtf",
  ".md": "text/markdown",
  ".html": "text/html",
  ".htm": "text/html",
};
const MB = 1024 * 1024;
const toMb = (n: number) => Math.round((n / MB) * 100) / 100;
// Vision input per turn: a few images of bounded size keep the request within provider limits.
const MAX_VISION_IMAGES = 4;
const MAX_VISION_BYTES = 5 * MB;
// Longest passage stored per chunk: a giant table cell should not become one huge search hit.
const MAX_CHUNK_TEXT = 4000;

/** The message form of a row. */
export function attachmentToMessage(row: AttachmentRow): ingestFilesV1.Attachment {
  return {
    attachmentId: row.id,
    sessionId: row.session_id,
    filename: row.filename,
    contentType: row.content_type,
    sizeBytes: Number(row.size_bytes),
    status: row.status,
    textLength: row.text_length,
    chunkCount: row.chunk_count,
    error: row.error,
    kind: row.kind,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Runs attachment processing in this process, one at a time per attachment, after the reply. */
export class AttachmentProcessor {
  private readonly running = new Set<string>();
  private closed = false;

  constructor(private readonly ctx: FilesContext) {}

  /** Schedules processing of `id` (no-op when it is already running). */
  schedule(id: string): void {
    if (this.closed || this.running.has(id)) return;
    this.running.add(id);
    setImmediate(() => {
      this.process(id)
        .catch((err) => this.ctx.log.error({ err, attachmentId: id }, "attachment processing crashed"))
        .finally(() => this.running.delete(id));
    });
  }

  /** Picks up attachments a previous process left pending or processing (a restart). */
  async resume(): Promise<void> {
    if (!this.ctx.storage) return;
    const rows = await this.ctx.storage
      .db<AttachmentRow>("attachments")
      .whereIn("status", ["pending", "processing"])
      .whereNull("deleted_at")
      .select("id");
    for (const row of rows) this.schedule(row.id);
  }

  /** Stops scheduling; work in flight finishes or is dropped with the process. */
  close(): void {
    this.closed = true;
  }

  private async process(id: string): Promise<void> {
    const { db, store } = requireStorage(this.ctx);
    const claimed = await db<AttachmentRow>("attachments")
      .where({ id })
      .whereIn("status", ["pending", "processing"])
      .whereNull("deleted_at")
      .update({ status: "processing", updated_at: db.fn.now() })
      .returning("*");
    const row = claimed[0];
    if (!row) return;
    let texts: string[] = [];
    let error = "";
    if (row.kind === "document") {
      try {
        const bytes = await store.get(row.object_key);
        const convert = () => convertDocument(row.filename, bytes, this.ctx.limits, this.ctx.pool);
        // A worker that died for another reason than the file (a restart, a crash) gets one more try.
        const converted = await convert().catch((err: unknown) => {
          if (err instanceof RedlineError) throw err;
          this.ctx.log.warn({ err, attachmentId: id }, "attachment conversion crashed; retrying once");
          return convert();
        });
        const { timeoutMs } = this.ctx.limits;
        texts = await this.ctx.pool.runTask<string[]>(
          { kind: "chunk-texts", html: converted.html, maxChars: MAX_CHUNK_TEXT },
          {
            timeoutMs,
            onTimeout: () =>
              new InputError(`The file's text took longer than ${seconds(timeoutMs)} s to index; split it`),
            onOutOfMemory: (mb) =>
              new InputError(`The file's text needs more than ${mb} MB of memory to index; split it`),
          },
        );
        if (texts.length === 0)
          error = "No text could be extracted from the file; if it is a scan, upload the pages as images instead";
      } catch (err) {
        error =
          err instanceof RedlineError
            ? String(err.detail)
            : "The file could not be processed; upload it again or convert it to PDF first";
        if (!(err instanceof RedlineError))
          this.ctx.log.error({ err, attachmentId: id }, "attachment conversion failed");
      }
    }
    await db.transaction(async (tx) => {
      // A delete while processing cancels: the row is gone from the session, nothing is stored.
      const live = await tx<AttachmentRow>("attachments").where({ id }).whereNull("deleted_at").forUpdate().first();
      if (!live) return;
      if (error) {
        await tx("attachments").where({ id }).update({ status: "failed", error, updated_at: tx.fn.now() });
        return;
      }
      // Batches of 1,000 rows (3 parameters each): a long document has more chunks than
      // Postgres's 65,535 bind parameters allow in one statement; the transaction keeps them atomic.
      const rows = texts.map((text, seq) => ({ attachment_id: id, seq, text }));
      for (let i = 0; i < rows.length; i += 1000) await tx("attachment_chunks").insert(rows.slice(i, i + 1000));
      await tx("attachments")
        .where({ id })
        .update({
          status: "completed",
          text_length: texts.reduce((n, t) => n + t.length, 0),
          chunk_count: texts.length,
          updated_at: tx.fn.now(),
        });
    });
  }
}

/**
 * FilesService.CreateAttachment: 415 for other extensions (the detail lists them), 413 over the
 * attachment cap (50 MB), 400 for an empty file; stores the bytes and schedules processing.
 */
export function createAttachmentHandler(ctx: FilesContext, processor: AttachmentProcessor) {
  return async (
    req: ingestFilesV1.CreateAttachmentRequest,
    call: CallContext,
  ): Promise<ingestFilesV1.CreateAttachmentResponse> => {
    const principal = requirePrincipal(call);
    let content = req.content;
    let name = req.filename;
    if (req.uploadId) {
      const upload = await readUpload(ctx, principal.ownerId, req.uploadId, call.requestId);
      content = upload.bytes;
      name ||= upload.row.filename;
    }
    const filename = name.split(/[\\/]/).pop()?.trim() ?? "";
    if (!filename) throw new InputError("filename is required: its extension says what the attachment is");
    if (filename.length > 512) throw new InputError("filename is longer than 512 characters");
    const ext = extensionOf(filename);
    if (!ATTACHMENT_EXTENSIONS.includes(ext)) throw new UnsupportedMediaTypeError(ext, ATTACHMENT_EXTENSIONS);
    if (content.length > ctx.maxAttachmentBytes)
      throw new PayloadTooLargeError(
        toMb(content.length),
        toMb(ctx.maxAttachmentBytes),
        ctx.supportEmail,
        call.requestId,
      );
    if (content.length === 0) throw new InputError("The attachment is empty");
    const { db, store } = requireStorage(ctx);
    const id = newId("att");
    const kind = IMAGE_TYPES[ext] ? "image" : "document";
    const contentType = IMAGE_TYPES[ext] ?? DOCUMENT_TYPES[ext] ?? "application/octet-stream";
    const key = `attachments/${id}`;
    await store.put(key, content, contentType);
    const [row] = await db<AttachmentRow>("attachments")
      .insert({
        id,
        owner_id: principal.ownerId,
        session_id: req.sessionId,
        filename,
        content_type: contentType,
        kind,
        size_bytes: content.length,
        object_key: key,
        status: "pending",
      })
      .returning("*");
    processor.schedule(id);
    return { attachment: attachmentToMessage(row) };
  };
}

/** FilesService.ListAttachments: the session's attachments, oldest first. */
export function listAttachmentsHandler(ctx: FilesContext) {
  return async (
    req: ingestFilesV1.ListAttachmentsRequest,
    call: CallContext,
  ): Promise<ingestFilesV1.ListAttachmentsResponse> => {
    const principal = requirePrincipal(call);
    const rows = await requireStorage(ctx)
      .db<AttachmentRow>("attachments")
      .where({ owner_id: principal.ownerId, session_id: req.sessionId })
      .whereNull("deleted_at")
      .orderBy([{ column: "created_at" }, { column: "id" }]);
    return { attachments: rows.map(attachmentToMessage) };
  };
}

async function ownAttachment(ctx: FilesContext, ownerId: string, id: string): Promise<AttachmentRow> {
  const row = await requireStorage(ctx)
    .db<AttachmentRow>("attachments")
    .where({ id, owner_id: ownerId })
    .whereNull("deleted_at")
    .first();
  if (!row) throw new NotFoundError("Attachment not found");
  return row;
}

/** FilesService.GetAttachmentJob: one attachment of the caller's. */
export function getAttachmentJobHandler(ctx: FilesContext) {
  return async (
    req: ingestFilesV1.GetAttachmentJobRequest,
    call: CallContext,
  ): Promise<ingestFilesV1.GetAttachmentJobResponse> => {
    const principal = requirePrincipal(call);
    return { attachment: attachmentToMessage(await ownAttachment(ctx, principal.ownerId, req.attachmentId)) };
  };
}

/** FilesService.DeleteAttachment: soft-deletes (cancels processing), drops its text and bytes. */
export function deleteAttachmentHandler(ctx: FilesContext) {
  return async (
    req: ingestFilesV1.DeleteAttachmentRequest,
    call: CallContext,
  ): Promise<ingestFilesV1.DeleteAttachmentResponse> => {
    const principal = requirePrincipal(call);
    const { db, store } = requireStorage(ctx);
    const row = await ownAttachment(ctx, principal.ownerId, req.attachmentId);
    await db.transaction(async (tx) => {
      await tx("attachments").where({ id: row.id }).update({ deleted_at: tx.fn.now(), updated_at: tx.fn.now() });
      await tx("attachment_chunks").where({ attachment_id: row.id }).delete();
    });
    await store.client.removeObject(store.bucket, row.object_key).catch(() => undefined);
    return { attachment: attachmentToMessage(row) };
  };
}

interface PassageRow {
  attachment_id: string;
  filename: string;
  seq: number;
  text: string;
}

/**
 * FilesService.SearchAttachments: websearch-syntax full-text search over the session's completed
 * attachments ('simple' configuration: no stemming, any language), best rank first; with an
 * empty query, the first passages of the matching attachments. Also returns the session's image
 * attachments for vision input.
 */
export function searchAttachmentsHandler(ctx: FilesContext) {
  return async (
    req: ingestFilesV1.SearchAttachmentsRequest,
    call: CallContext,
  ): Promise<ingestFilesV1.SearchAttachmentsResponse> => {
    const principal = requirePrincipal(call);
    const { db, store } = requireStorage(ctx);
    const limit = Math.min(50, Math.max(1, req.limit || 5));
    const base = () => {
      const q = db("attachment_chunks as c")
        .join("attachments as a", "a.id", "c.attachment_id")
        .where({ "a.owner_id": principal.ownerId, "a.session_id": req.sessionId, "a.status": "completed" })
        .whereNull("a.deleted_at");
      if (req.filename) q.whereILike("a.filename", `%${req.filename.replace(/[\\%_]/g, "\\$&")}%`);
      return q;
    };
    const query = req.query.trim();
    // Independent reads, run together: a chat turn waits on this call before its engine starts.
    const [rows, [{ count }], images] = await Promise.all([
      query
        ? base()
            .whereRaw("c.tsv @@ websearch_to_tsquery('simple', ?)", [req.query])
            .select<PassageRow[]>("c.attachment_id", "a.filename", "c.seq", "c.text")
            .orderByRaw("ts_rank(c.tsv, websearch_to_tsquery('simple', ?)) desc, c.seq", [req.query])
            .limit(limit)
        : base()
            .select<PassageRow[]>("c.attachment_id", "a.filename", "c.seq", "c.text")
            .orderBy([{ column: "a.created_at" }, { column: "c.seq" }])
            .limit(limit),
      db("attachments")
        .where({ owner_id: principal.ownerId, session_id: req.sessionId, status: "completed" })
        .whereNull("deleted_at")
        .count<{ count: string }[]>("* as count"),
      db<AttachmentRow>("attachments")
        .where({ owner_id: principal.ownerId, session_id: req.sessionId, status: "completed", kind: "image" })
        .whereNull("deleted_at")
        .where("size_bytes", "<=", MAX_VISION_BYTES)
        .orderBy("created_at")
        .limit(MAX_VISION_IMAGES),
    ]);
    return {
      passages: rows.map((r) => ({
        attachmentId: r.attachment_id,
        filename: r.filename,
        chunkIndex: r.seq,
        text: r.text,
      })),
      images: await Promise.all(
        images.map(async (i) => ({
          filename: i.filename,
          mimeType: i.content_type,
          base64Data: (await store.get(i.object_key)).toString("base64"),
        })),
      ),
      attachmentCount: Number(count),
    };
  };
}
