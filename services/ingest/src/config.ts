// Ingest configuration: loadConfig turns environment variables into one typed config; only
// main.ts passes process.env, tests build configs directly.
import { join } from "node:path";
import type { RemoteImages } from "@redline/html-chunks";
import {
  listenAddr,
  numberFromEnv as numberVar,
  readAddrs,
  readMetricsAddr,
  readTracingEnv,
  type S3Config,
  type ServiceAddrs,
  type TracingConfig,
} from "@redline/service-kit";
import type { ExportFormat } from "./export/export-formats.js";
import type { ConvertLimits } from "./formats.js";
import type { MailConfig } from "./mailer.js";

/** Ingest configuration. Sizes in bytes, durations in milliseconds. */
export interface IngestConfig {
  /** METRICS_ADDR: host:port of GET /metrics (port 0 picks one), "off" records nothing; unset: not served. */
  metricsAddr?: string;
  /** host:port to serve on; port 0 picks a free one. */
  grpcAddress: string;
  /** Upload cap in bytes; larger content gets 413 request_too_large. */
  maxUploadBytes: number;
  /** pino level (default info). */
  logLevel?: string;
  /** OTLP trace export from OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT and OTEL_SERVICE_NAME; absent: off. */
  tracing?: TracingConfig;
  /** Contact address put in 413 bodies (default support@redline.local). */
  supportEmail?: string;
  /** Converter worker processes (default: CPU count, at most 4). */
  converterWorkers?: number;
  /** REMOTE_IMAGES: uploads keep remote and relative `<img>` sources ("keep", default) or drop them ("drop"). */
  remoteImages?: RemoteImages;
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
  /** Period of the expired-file sweep (commands/retention.ts), in ms; default 10 minutes (FILE_SWEEP_MS). */
  fileSweepMs?: number;
  /**
   * Billing, asked for the caller's email on file when an email export names no recipient
   * (without it such an export answers 503), and documents, asked which stored originals its
   * documents still name (without it the sweep keeps every original).
   */
  addrs?: Pick<ServiceAddrs, "billing" | "documents">;
}

/** Default export cap per format, in MB. */
export const DEFAULT_EXPORT_MAX_MB = 100;
/** Default attachment cap (unshown-parts.md: ≤50 MB). */
export const DEFAULT_MAX_ATTACHMENT_BYTES = 50 * 1024 * 1024;

/** Default of IngestConfig.emailExportsPerHour (EMAIL_EXPORTS_PER_HOUR). */
export const DEFAULT_EMAIL_EXPORTS_PER_HOUR = 20;

type Env = Record<string, string | undefined>;

/**
 * Reads LISTEN_ADDR (the bind address; default INGEST_ADDR, else 127.0.0.1:8065), MAX_UPLOAD_MB (100; 1 MB = 1,048,576
 * bytes), SUPPORT_EMAIL (support@redline.local), CONVERT_TIMEOUT_MS (30000), EXPORT_TIMEOUT_MS
 * (60000, the HTML work of one export), MAX_ELEMENTS (500000, per document or export source),
 * CONVERTER_WORKERS (CPU count, at most 4), EXPORT_MAX_MB (100, every export format),
 * CHROMIUM_PATH (first installed of /usr/bin/chromium, ...), MAX_ATTACHMENT_MB (50),
 * DATABASE_URL and S3_ENDPOINT/S3_ACCESS_KEY/S3_SECRET_KEY/S3_BUCKET/S3_REGION (files storage;
 * without both, exports and conversions still work and the stored-file RPCs answer 503),
 * S3_PUBLIC_ENDPOINT (pre-signed URLs' host, default S3_ENDPOINT), SMTP_URL (unset: messages
 * are written as .eml files to $REDLINE_DATA_DIR/mail, default .redline/mail), MAIL_FROM,
 * EMAIL_EXPORTS_PER_HOUR (20 per account, an integer >= 1), FILE_SWEEP_MS (600000, the period
 * of the expired-file sweep, an integer >= 1), BILLING_ADDR (the email on file of an export
 * without recipient), DOCUMENTS_ADDR (which originals are still named), REMOTE_IMAGES ("keep",
 * or "drop": uploads lose `<img>` whose src is remote or relative) and LOG_LEVEL (info).
 * Throws an Error naming the variable when a number is malformed or out of range.
 */
export function loadConfig(env: Env): IngestConfig {
  const maxUploadMb = numberVar(env, "MAX_UPLOAD_MB", (n) => n > 0, "a positive number") ?? 100;
  const timeoutMs = numberVar(env, "CONVERT_TIMEOUT_MS", (n) => Number.isInteger(n) && n > 0, "a positive integer");
  const exportTimeoutMs = numberVar(
    env,
    "EXPORT_TIMEOUT_MS",
    (n) => Number.isInteger(n) && n > 0,
    "a positive integer",
  );
  const maxElements = numberVar(env, "MAX_ELEMENTS", (n) => Number.isInteger(n) && n > 0, "a positive integer");
  const limits = {
    ...(timeoutMs !== undefined && { timeoutMs }),
    ...(exportTimeoutMs !== undefined && { exportTimeoutMs }),
    ...(maxElements !== undefined && { maxElements }),
  };
  const exportMaxMb = numberVar(env, "EXPORT_MAX_MB", (n) => n > 0, "a positive number");
  const attachmentMb = numberVar(env, "MAX_ATTACHMENT_MB", (n) => n > 0, "a positive number");
  const emailPerHour = numberVar(
    env,
    "EMAIL_EXPORTS_PER_HOUR",
    (n) => Number.isInteger(n) && n >= 1,
    "an integer >= 1",
  );
  const fileSweepMs = numberVar(env, "FILE_SWEEP_MS", (n) => Number.isInteger(n) && n >= 1, "an integer >= 1");
  const workers = numberVar(env, "CONVERTER_WORKERS", (n) => Number.isInteger(n) && n > 0, "a positive integer");
  const remoteImages = env.REMOTE_IMAGES?.trim().toLowerCase() || undefined;
  if (remoteImages !== undefined && remoteImages !== "keep" && remoteImages !== "drop")
    throw new Error(`REMOTE_IMAGES must be "keep" or "drop", got ${JSON.stringify(env.REMOTE_IMAGES)}`);
  const addrs = readAddrs(env);
  return {
    grpcAddress: listenAddr(env, "ingest"),
    metricsAddr: readMetricsAddr(env),
    addrs: { billing: addrs.billing, documents: addrs.documents },
    maxUploadBytes: Math.floor(maxUploadMb * 1024 * 1024),
    logLevel: env.LOG_LEVEL || "info",
    tracing: readTracingEnv(env),
    ...(env.SUPPORT_EMAIL && { supportEmail: env.SUPPORT_EMAIL }),
    ...(Object.keys(limits).length > 0 && { limits }),
    ...(workers !== undefined && { converterWorkers: workers }),
    ...(remoteImages !== undefined && { remoteImages }),
    ...(exportMaxMb !== undefined && {
      exportMaxMb: { docx: exportMaxMb, pdf: exportMaxMb, html: exportMaxMb, markdown: exportMaxMb, txt: exportMaxMb },
    }),
    ...(env.CHROMIUM_PATH && { chromiumPath: env.CHROMIUM_PATH }),
    ...(attachmentMb !== undefined && { maxAttachmentBytes: Math.floor(attachmentMb * 1024 * 1024) }),
    ...(env.DATABASE_URL && { databaseUrl: env.DATABASE_URL }),
    ...(env.S3_ENDPOINT && {
      s3: {
        endpoint: env.S3_ENDPOINT,
        accessKey: env.S3_ACCESS_KEY ?? "S3RVER",
        secretKey: env.S3_SECRET_KEY ?? "S3RVER",
        bucket: env.S3_BUCKET ?? "redline",
        region: env.S3_REGION ?? "us-east-1",
      },
    }),
    ...(env.S3_PUBLIC_ENDPOINT && { s3PublicEndpoint: env.S3_PUBLIC_ENDPOINT }),
    ...(emailPerHour !== undefined && { emailExportsPerHour: emailPerHour }),
    ...(fileSweepMs !== undefined && { fileSweepMs }),
    mail: {
      ...(env.SMTP_URL && { smtpUrl: env.SMTP_URL }),
      sinkDir: join(env.REDLINE_DATA_DIR || ".redline", "mail"),
      ...(env.MAIL_FROM && { from: env.MAIL_FROM }),
    },
  };
}
