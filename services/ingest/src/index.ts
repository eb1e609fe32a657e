// Public surface of @redline/ingest.
export { readIngestEnv } from "./config.js";
export {
  type ConvertLimits,
  type ConvertResult,
  closeDefaultConverterPool,
  convertDocument,
  DEFAULT_LIMITS,
  type DocumentFormat,
  type PageMargins,
  type PageSetup,
  type PaperSize,
  SUPPORTED_EXTENSIONS,
} from "./convert.js";
export { migrations, SCHEMA } from "./db/migrations.js";
export { ConverterPool, type ConverterPoolOptions } from "./sandbox/pool.js";
export { type IngestConfig, ingestHandlers, type RunningIngestService, startIngestService } from "./service.js";
