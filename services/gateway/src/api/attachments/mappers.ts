// Ingest attachments as the spec's attachment status object.
import type { ingestFilesV1 } from "@redline/grpc-stubs";
import type { z } from "zod";
import type { AttachmentStatusSchema } from "./schemas.js";

type Status = z.output<typeof AttachmentStatusSchema>["status"];

/** The JSON of one attachment's status; text figures only once completed, error only when failed. */
export function attachmentToJson(a: ingestFilesV1.Attachment): z.output<typeof AttachmentStatusSchema> {
  const done = a.status === "completed";
  return {
    attachment_id: a.attachmentId,
    job_id: a.attachmentId,
    filename: a.filename,
    status: a.status as Status,
    kind: a.kind === "image" ? "image" : "document",
    content_type: a.contentType,
    size_bytes: a.sizeBytes,
    text_length: done ? a.textLength : null,
    chunk_count: done ? a.chunkCount : null,
    error: a.status === "failed" ? a.error : undefined,
    created_at: (a.createdAt ?? new Date()).toISOString(),
    updated_at: (a.updatedAt ?? new Date()).toISOString(),
  };
}
