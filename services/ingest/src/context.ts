// What the FilesService handlers share: the ingest schema, the object store, the converter pool,
// limits and the mailer. Built once by the service; absent pieces make their RPCs answer 503.
import { type Knex, type Logger, type ObjectStore, UnavailableError } from "@redline/service-kit";
import type { ExportFormat } from "./export/export-formats.js";
import type { ConvertLimits } from "./formats.js";
import type { Mailer } from "./mailer.js";
import type { ConverterPool } from "./sandbox/pool.js";

/** Storage-backed pieces; null when the service runs without a database or object store. */
export interface FilesStorage {
  db: Knex;
  store: ObjectStore;
}

/** Everything the files handlers use. Sizes in bytes. */
export interface FilesContext {
  storage: FilesStorage | null;
  pool: ConverterPool;
  limits: ConvertLimits;
  log: Logger;
  supportEmail: string;
  /** Upload cap of documents (bytes). */
  maxUploadBytes: number;
  /** Attachment cap (bytes; 50 MB by default). */
  maxAttachmentBytes: number;
  /** Export cap per format (bytes). */
  exportMaxBytes: Record<ExportFormat, number>;
  chromiumPath?: string;
  mailer: Mailer;
  /** Email exports one account may request per hour (IngestConfig.emailExportsPerHour). */
  emailExportsPerHour: number;
  /**
   * Public origin of the object store (S3_PUBLIC_ENDPOINT) that pre-signed links point at: a
   * security boundary, see README "Security model".
   */
  publicS3Endpoint?: string;
}

/** The storage, or 503 when this ingest runs without a database and object store. */
export function requireStorage(ctx: FilesContext): FilesStorage {
  if (!ctx.storage)
    throw new UnavailableError("File storage is not configured for the ingest service (DATABASE_URL and S3_*)");
  return ctx.storage;
}

/** A new id: prefix + 32 hex characters. */
export function newId(prefix: string): string {
  return `${prefix}_${crypto.randomUUID().replaceAll("-", "")}`;
}

/**
 * A pre-signed URL on the public endpoint's origin. The store signs links for that endpoint
 * already (createObjectStore's publicEndpoint: SigV4 signs the Host), so this only guards
 * against a link signed elsewhere; a rewritten host would fail the signature check.
 */
export function publicUrl(ctx: FilesContext, url: string): string {
  if (!ctx.publicS3Endpoint) return url;
  const u = new URL(url);
  const p = new URL(ctx.publicS3Endpoint);
  u.protocol = p.protocol;
  u.host = p.host;
  return u.toString();
}
