// Row types of the ingest schema.

/** ingest.media: one stored image per owner and content hash. */
export interface MediaRow {
  owner_id: string;
  id: string;
  content_type: string;
  size_bytes: number;
  created_at: Date;
}

/** ingest.uploads: a pre-signed upload slot. */
export interface UploadRow {
  id: string;
  owner_id: string;
  filename: string;
  content_type: string;
  size_bytes: string | number;
  purpose: string;
  object_key: string;
  expires_at: Date;
  created_at: Date;
}

/** ingest.attachments: an attachment and its processing state. */
export interface AttachmentRow {
  id: string;
  owner_id: string;
  session_id: string;
  filename: string;
  content_type: string;
  kind: "document" | "image";
  size_bytes: string | number;
  object_key: string;
  status: "pending" | "processing" | "completed" | "failed";
  error: string;
  text_length: number;
  chunk_count: number;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  /** When the attachment's bytes left the object store after its deletion; null until then. */
  object_removed_at: Date | null;
}

/** ingest.templates. */
export interface TemplateRow {
  id: string;
  owner_id: string;
  organization_id: string;
  name: string;
  filename: string;
  title: string;
  format: string;
  html: string;
  created_at: Date;
  deleted_at: Date | null;
}

/** ingest.exports: stored export files (downloads and email requests). */
export interface ExportRow {
  id: string;
  owner_id: string;
  session_id: string;
  kind: "download" | "email";
  format: string;
  filename: string;
  recipient_email: string;
  status: "queued" | "sent" | "failed" | "stored";
  object_key: string;
  error: string;
  created_at: Date;
  updated_at: Date;
  /** When the expired-file sweep removed the stored object; null while it is stored (or never was). */
  object_removed_at: Date | null;
}

/** ingest.document_sources: a loaded document's original file and its chunk map (object store keys). */
export interface DocumentSourceRow {
  id: string;
  owner_id: string;
  /** SourceFormat: docx, markdown or txt. */
  format: string;
  filename: string;
  size_bytes: string | number;
  object_key: string;
  map_key: string;
  created_at: Date;
  /** When the retention sweep last found a document naming it; null until its first check. */
  checked_at: Date | null;
}
