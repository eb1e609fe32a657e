// The ingest service's dependencies, built once from the config: the converter pool, the
// optional storage (Postgres ingest schema + object store), the mailer, the attachment
// processor, and the accounts and documents clients. Absent storage makes the stored-file RPCs
// answer 503.
import {
  type Clients,
  createClients,
  createDb,
  createLogger,
  createObjectStore,
  type Logger,
  migrateLatest,
  type StartOptions,
} from "@redline/service-kit";
import {
  DEFAULT_EMAIL_EXPORTS_PER_HOUR,
  DEFAULT_EXPORT_MAX_MB,
  DEFAULT_MAX_ATTACHMENT_BYTES,
  type IngestConfig,
} from "./config.js";
import { migrations, SCHEMA } from "./db/migrations.js";
import { EXPORT_FORMATS, type ExportFormat } from "./export/export-formats.js";
import { closeBrowser } from "./export/to-pdf.js";
import { type ConvertLimits, DEFAULT_LIMITS } from "./formats.js";
import { createMailer, type Mailer } from "./mailer.js";
import { ConverterPool } from "./sandbox/pool.js";
import type { FilesStorage } from "./storage.js";
import { AttachmentProcessor } from "./workers/attachment-processor.js";

/**
 * The services ingest calls: accounts (served by the billing process), for the caller's email on
 * file and the codes it mails; documents' library, for which stored originals its documents still
 * name (the retention sweep).
 */
const CLIENTS = ["accounts", "library"] as const;

export type { FilesStorage } from "./storage.js";

/** Everything the RPCs and commands use. Sizes in bytes. */
export interface IngestContext {
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
   * security boundary, see docs/security.md.
   */
  publicS3Endpoint?: string;
  /** Runs attachment processing after the reply. */
  attachments: AttachmentProcessor;
  /** Accounts (the caller's email on file, verification codes, handoffs); null without IngestConfig.addrs. */
  accounts: Clients<"accounts">["accounts"] | null;
  /** Documents' library (which originals are still named); null without IngestConfig.addrs. */
  library: Clients<"library">["library"] | null;
}

/**
 * With databaseUrl and s3: migrates the `ingest` schema (unless `opts.migrate` is false) and
 * ensures the bucket; else null.
 */
async function openStorage(cfg: IngestConfig, opts: StartOptions, log: Logger): Promise<FilesStorage | null> {
  if (!cfg.databaseUrl || !cfg.s3) return null;
  const db = createDb(cfg.databaseUrl, SCHEMA);
  const store = createObjectStore(cfg.s3, { publicEndpoint: cfg.s3PublicEndpoint });
  try {
    if (opts.migrate !== false) await migrateLatest(db, SCHEMA, migrations, log);
    await store.ensureBucket();
  } catch (err) {
    await db.destroy();
    throw err;
  }
  return { db, store };
}

/**
 * Builds the context: storage (see openStorage; throws when Postgres or the store refuse), a
 * warm converter pool and the mailer. PDF export's Chromium starts on first use.
 */
export async function createContext(cfg: IngestConfig, opts: StartOptions = {}): Promise<IngestContext> {
  const log = createLogger("ingest", cfg.logLevel);
  const storage = await openStorage(cfg, opts, log);
  const pool = new ConverterPool({
    size: cfg.converterWorkers,
    maxMemoryMb: cfg.converterMemoryMb,
    remoteImages: cfg.remoteImages,
  });
  pool.warm();
  const exportMaxBytes = Object.fromEntries(
    EXPORT_FORMATS.map((f) => [f, Math.floor((cfg.exportMaxMb?.[f] ?? DEFAULT_EXPORT_MAX_MB) * 1024 * 1024)]),
  ) as Record<ExportFormat, number>;
  const deps = {
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
    ...(cfg.addrs ? createClients(cfg.addrs, CLIENTS) : { accounts: null, library: null }),
  };
  return { ...deps, attachments: new AttachmentProcessor(deps) };
}

/** Releases the context: stops scheduling attachments, closes mail, the clients, workers, Chromium and Postgres. */
export async function closeContext(ctx: IngestContext): Promise<void> {
  ctx.attachments.close();
  ctx.mailer.close();
  ctx.accounts?.close();
  ctx.library?.close();
  await Promise.all([ctx.pool.close(), closeBrowser()]);
  await ctx.storage?.db.destroy();
}
