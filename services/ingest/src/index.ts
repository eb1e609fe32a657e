// Public surface of @redline/ingest (tests, scripts).
export { type IngestConfig, loadConfig } from "./config.js";
export { closeDefaultConverterPool, convertDocument } from "./convert.js";
export { migrations, SCHEMA } from "./db/migrations.js";
export {
  type ConvertLimits,
  type ConvertResult,
  DEFAULT_LIMITS,
  type DocumentFormat,
  type PageMargins,
  type PageSetup,
  type PaperSize,
  SUPPORTED_EXTENSIONS,
} from "./formats.js";
export { ConverterPool, type ConverterPoolOptions } from "./sandbox/pool.js";
export { type RunningIngestService, startIngestService } from "./service.js";
