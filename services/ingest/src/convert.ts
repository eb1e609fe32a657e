// The front door of ingest (STYLE practice 11): one function from (file name, bytes) to HTML,
// picking the converter by extension and running it in a bounded worker.

import {
  type ConvertLimits,
  type ConvertOptions,
  type ConvertResult,
  DEFAULT_LIMITS,
  formatForFilename,
} from "./formats.js";
import { timeConversion } from "./ingest-metrics.js";
import { ConverterPool } from "./sandbox/pool.js";

let sharedPool: ConverterPool | null = null;

/** The process-wide pool used when convertDocument is not given one (created on first use). */
export function defaultConverterPool(): ConverterPool {
  sharedPool ??= new ConverterPool();
  return sharedPool;
}

/** Terminates the process-wide pool, if it was ever started. */
export async function closeDefaultConverterPool(): Promise<void> {
  const pool = sharedPool;
  sharedPool = null;
  await pool?.close();
}

/**
 * Converts an uploaded file to block-structured HTML, sanitized with the stored documents'
 * rules (sanitizeHtml) because convert-only callers hand it straight to a client
 * (interface-spec fact 8; chunking happens in the documents service).
 *
 * - `filename` picks the converter by extension (.pdf .docx .txt .rtf .md .html .htm, any case);
 *   any other extension, `.doc` and no extension throw UnsupportedMediaTypeError (415, the
 *   detail lists SUPPORTED_EXTENSIONS) before any byte is read.
 * - The conversion runs in a worker process bounded by `limits.timeoutMs` (default 30 s) and a
 *   heap cap; docx zips are checked against the entry count, uncompressed size and ratio
 *   limits before unzipping.
 * - Unreadable input (empty, encrypted, damaged, a zip bomb, too slow or too big to convert)
 *   throws InputError (400) with a message the user can act on; a result with more than
 *   `limits.maxElements` elements throws TooManyElementsError (413).
 * - `opts.keepSource`: md/txt (and docx when its converter maps) also return `source`, the
 *   chunk map back to the original bytes, with a `data-chunk-id` on every chunk of the HTML.
 */
export async function convertDocument(
  filename: string,
  bytes: Buffer,
  limits: Partial<ConvertLimits> = {},
  pool: ConverterPool = defaultConverterPool(),
  opts: ConvertOptions = {},
): Promise<ConvertResult> {
  const format = formatForFilename(filename);
  const task = { format, filename, bytes, limits: { ...DEFAULT_LIMITS, ...limits }, keepSource: opts.keepSource };
  return timeConversion(format, () => pool.run(task));
}
