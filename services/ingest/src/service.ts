// The ingest service as a library: build from config, start, close. main.ts is the thin shell.
import { ingestFilesV1, ingestV1 } from "@redline/grpc-stubs";
import {
  bindService,
  createDb,
  createLogger,
  createObjectStore,
  healthService,
  type Logger,
  migrateLatest,
  type S3Config,
  type ServiceBinding,
  startGrpcServer,
} from "@redline/service-kit";
import {
  AttachmentProcessor,
  createAttachmentHandler,
  deleteAttachmentHandler,
  getAttachmentJobHandler,
  listAttachmentsHandler,
  searchAttachmentsHandler,
} from "./commands/attachments.js";
import { createDownloadHandler, queueEmailExportHandler } from "./commands/deliveries.js";
import { DEFAULT_EMAIL_EXPORTS_PER_HOUR } from "./commands/email-limits.js";
import { getMediaHandler } from "./commands/media.js";
import {
  createTemplateHandler,
  deleteTemplateHandler,
  getTemplateHandler,
  listTemplatesHandler,
} from "./commands/templates.js";
import { convertUploadHandler, createUploadHandler } from "./commands/uploads.js";
import type { FilesContext, FilesStorage } from "./context.js";
import { migrations, SCHEMA } from "./db/migrations.js";
import { EXPORT_FORMATS, type ExportFormat } from "./export/export-formats.js";
import { closeBrowser } from "./export/to-pdf.js";
import { type ConvertLimits, DEFAULT_LIMITS } from "./formats.js";
import { createMailer, type MailConfig } from "./mailer.js";
import { convertDocumentHandler } from "./rpc/convert-document.js";
import { exportDocumentHandler } from "./rpc/export-document.js";
import { listFormats } from "./rpc/list-formats.js";
import { ConverterPool } from "./sandbox/pool.js";

/** Ingest configuration. Sizes in bytes, durations in milliseconds. */
export interface IngestConfig {
  /** host:port to serve on; port 0 picks a free one. */
  grpcAddress: string;
  /** Upload cap in bytes; larger content gets 413 request_too_large. */
  maxUploadBytes: number;
  /** pino level (default info). */
  logLevel?: string;
  /** Contact address put in 413 bodies (default support@redline.local). */
  supportEmail?: string;
  /** Converter worker processes (default: CPU count, at most 4). */
  converterWorkers?: number;
  /** Heap cap of each converter worker in MB (default 2048). */
  converterMemoryMb?: number;
  /** Overrides of DEFAULT_LIMITS (conversion timeout, zip bomb bounds). */
  limits?: Partial<ConvertLimits>;
  /** Export cap in MB per format (default 100 each); a bigger file is a 413 (Errors rule 6). */
  exportMaxMb?: Partial<Record<ExportFormat, number>>;
  /** Chromium binary for PDF export (default /usr/bin/chromium or another installed candidate). */
  chromiumPath?: string;
  /** Postgres for the ingest schema (media, uploads, attachments, templates, exports); without it those RPCs answer 503. */
  databaseUrl?: string;
  /** Object store for media, uploads, attachments and stored exports; needed with databaseUrl. */
  s3?: S3Config;
  /** Public endpoint pre-signed URLs should point at, when clients reach the store by another address. */
  s3PublicEndpoint?: string;
  /** Attachment cap in bytes (default 50 MB). */
  maxAttachmentBytes?: number;
  /** Mail for email exports: SMTP URL, or the .eml sink directory (default .redline/mail). */
  mail?: MailConfig;
  /** Email exports one account (owner) may request per hour, counted in Postgres (default 20). */
  emailExportsPerHour?: number;
}

/** Default export cap per format, in MB. */
export const DEFAULT_EXPORT_MAX_MB = 100;
/** Default attachment cap (unshown-parts.md: ≤50 MB). */
export const DEFAULT_MAX_ATTACHMENT_BYTES = 50 * 1024 * 1024;

/** A started service. */
export interface RunningIngestService {
  /** host:port actually bound. */
  address: string;
  close(): Promise<void>;
}

/** Handlers of ingest.v1.IngestService over a converter pool. */
export function ingestHandlers(
  cfg: IngestConfig,
  pool: ConverterPool,
  storage: FilesStorage | null = null,
): ServiceBinding {
  return bindService(ingestV1.IngestServiceService, {
    convertDocument: convertDocumentHandler({
      pool,
      maxUploadBytes: cfg.maxUploadBytes,
      supportEmail: cfg.supportEmail ?? "support@redline.local",
      limits: { ...DEFAULT_LIMITS, ...cfg.limits },
      storage,
    }),
    listFormats,
  });
}

/** The files context from config, over an optional storage. */
export function filesContext(
  cfg: IngestConfig,
  pool: ConverterPool,
  storage: FilesStorage | null,
  log: Logger,
): FilesContext {
  const exportMaxBytes = Object.fromEntries(
    EXPORT_FORMATS.map((f) => [f, Math.floor((cfg.exportMaxMb?.[f] ?? DEFAULT_EXPORT_MAX_MB) * 1024 * 1024)]),
  ) as Record<ExportFormat, number>;
  return {
    storage,
    pool,
    limits: { ...DEFAULT_LIMITS, ...cfg.limits },
    log,
    supportEmail: cfg.supportEmail ?? "support@redline.local",
    maxUploadBytes: cfg.maxUploadBytes,
    maxAttachmentBytes: cfg.maxAttachmentBytes ?? DEFAULT_MAX_ATTACHMENT_BYTES,
    exportMaxBytes,
    chromiumPath: cfg.chromiumPath,
    mailer: createMailer(cfg.mail ?? {}),
    emailExportsPerHour: cfg.emailExportsPerHour ?? DEFAULT_EMAIL_EXPORTS_PER_HOUR,
    publicS3Endpoint: cfg.s3PublicEndpoint,
  };
}

/** Handlers of ingest.v1.FilesService. */
export function filesHandlers(ctx: FilesContext, processor: AttachmentProcessor): ServiceBinding {
  return bindService(ingestFilesV1.FilesServiceService, {
    exportDocument: exportDocumentHandler(ctx),
    getMedia: getMediaHandler(ctx),
    createUpload: createUploadHandler(ctx),
    convertUpload: convertUploadHandler(ctx),
    createAttachment: createAttachmentHandler(ctx, processor),
    listAttachments: listAttachmentsHandler(ctx),
    getAttachmentJob: getAttachmentJobHandler(ctx),
    deleteAttachment: deleteAttachmentHandler(ctx),
    searchAttachments: searchAttachmentsHandler(ctx),
    createTemplate: createTemplateHandler(ctx),
    listTemplates: listTemplatesHandler(ctx),
    deleteTemplate: deleteTemplateHandler(ctx),
    getTemplate: getTemplateHandler(ctx),
    createDownload: createDownloadHandler(ctx),
    queueEmailExport: queueEmailExportHandler(ctx),
  });
}

/**
 * Serves IngestService, FilesService and grpc.health.v1.Health on cfg.grpcAddress (interface-spec
 * fact 8; unshown-parts.md uploads, attachments, templates, export). With databaseUrl and s3 it
 * migrates the `ingest` schema and ensures the bucket first; attachments left pending by an
 * earlier process are resumed. Conversions run in a pool of worker processes; PDF export uses one
 * warm Chromium launched on first use. close() stops all of it.
 */
export async function startIngestService(cfg: IngestConfig): Promise<RunningIngestService> {
  const log = createLogger("ingest", cfg.logLevel);
  let storage: FilesStorage | null = null;
  if (cfg.databaseUrl && cfg.s3) {
    const db = createDb(cfg.databaseUrl, SCHEMA);
    const store = createObjectStore(cfg.s3, { publicEndpoint: cfg.s3PublicEndpoint });
    try {
      await migrateLatest(db, SCHEMA, migrations);
      await store.ensureBucket();
    } catch (err) {
      await db.destroy();
      throw err;
    }
    storage = { db, store };
  }
  const pool = new ConverterPool({ size: cfg.converterWorkers, maxMemoryMb: cfg.converterMemoryMb });
  pool.warm();
  const ctx = filesContext(cfg, pool, storage, log);
  const processor = new AttachmentProcessor(ctx);
  let server: Awaited<ReturnType<typeof startGrpcServer>>;
  try {
    server = await startGrpcServer(
      cfg.grpcAddress,
      [ingestHandlers(cfg, pool, storage), filesHandlers(ctx, processor), healthService({})],
      log,
    );
  } catch (err) {
    await pool.close();
    await storage?.db.destroy();
    throw err;
  }
  await processor.resume();
  log.info({ address: server.address, storage: storage !== null }, "ingest service listening");
  return {
    address: server.address,
    async close() {
      processor.close();
      await server.close();
      ctx.mailer.close();
      await Promise.all([pool.close(), closeBrowser()]);
      await storage?.db.destroy();
    },
  };
}
