// Public surface of @redline/ingest (tests, scripts).

export { exportDocument } from "./commands/export-document.js";
export { removeExpiredFiles } from "./commands/retention.js";
export { type IngestConfig, loadConfig } from "./config.js";
export { closeDefaultConverterPool, convertDocument } from "./convert.js";
export { convertDocx } from "./converters/docx.js";
export { migrations, SCHEMA } from "./db/migrations.js";
export { checkZip } from "./docx/zip-guard.js";
export { documentBlocks, writeDocxInPlace } from "./export/docx-in-place.js";
export { type ExportFormat, resolveLayout } from "./export/export-formats.js";
export { htmlToDocx } from "./export/to-docx.js";
export { closeBrowser, warmBrowser } from "./export/to-pdf.js";
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
export { loadHtml } from "./html/util.js";
export { ConverterPool, type ConverterPoolOptions } from "./sandbox/pool.js";
export { type RunningIngestService, startIngestService } from "./service.js";
export {
  CONTRACT_ITEMS,
  contractDocx,
  PART_PICTURES,
  picturePartsDocx,
  REPEATING_SECTION_XML,
  repeatingSectionDocx,
  SECTION_PARAGRAPHS,
  STYLE_NUMBERED,
} from "./testing/fidelity-docs.js";
// Fixture builders of the system tests (test/), kept beside the unit tests that share them.
export { CODEPAGE_TEXTS, codepageRtf, HIDDEN, hiddenDocx, LIST_ITEMS, listsDocx } from "./testing/generated-docs.js";
export { buildZip, minimalDocxParts } from "./testing/zip.js";
