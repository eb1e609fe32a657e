// Ingest configuration: readIngestEnv turns environment variables into one typed config;
// only main.ts passes process.env, tests build configs directly.
import { DEFAULT_ADDRS, numberFromEnv as numberVar } from "@redline/service-kit";
import type { IngestConfig } from "./service.js";

type Env = Record<string, string | undefined>;

/**
 * Reads INGEST_ADDR (default DEFAULT_ADDRS.ingest), MAX_UPLOAD_MB (100; 1 MB = 1,048,576
 * bytes), SUPPORT_EMAIL (support@redline.local), CONVERT_TIMEOUT_MS (30000),
 * CONVERTER_WORKERS (CPU count, at most 4) and LOG_LEVEL (info).
 * Throws an Error naming the variable when a number is malformed or out of range.
 */
export function readIngestEnv(env: Env): IngestConfig {
  const maxUploadMb = numberVar(env, "MAX_UPLOAD_MB", (n) => n > 0, "a positive number") ?? 100;
  const timeoutMs = numberVar(env, "CONVERT_TIMEOUT_MS", (n) => Number.isInteger(n) && n > 0, "a positive integer");
  const workers = numberVar(env, "CONVERTER_WORKERS", (n) => Number.isInteger(n) && n > 0, "a positive integer");
  return {
    grpcAddress: env.INGEST_ADDR || DEFAULT_ADDRS.ingest,
    maxUploadBytes: Math.floor(maxUploadMb * 1024 * 1024),
    logLevel: env.LOG_LEVEL || "info",
    ...(env.SUPPORT_EMAIL && { supportEmail: env.SUPPORT_EMAIL }),
    ...(timeoutMs !== undefined && { limits: { timeoutMs } }),
    ...(workers !== undefined && { converterWorkers: workers }),
  };
}
