// Conversions for callers (interface-spec fact 8): the front door plus what the service adds:
// the upload cap, the call's deadline, the 413 for too many elements and the move of embedded
// images to the caller's media.
import { InputError, type Logger } from "@redline/service-kit";
import type { IngestContext } from "../context.js";
import { convertDocument } from "../convert.js";
import { type ConvertResult, formatForFilename, TooManyElementsError } from "../formats.js";
import { extractMedia } from "./media.js";
import { checkSize, timeBound } from "./shared.js";
import { type StoredSource, storeSource } from "./sources.js";

const MAX_FILENAME_CHARS = 512;
// Leave the reply time to travel back before the caller's deadline passes.
const DEADLINE_MARGIN_MS = 250;

/** A file to convert; without an ownerId (tools, benchmarks) images stay inline as data: URLs. */
export interface ConvertInput {
  filename: string;
  content: Buffer;
  ownerId: string | null;
  requestId: string;
  deadline?: Date | null;
  /** The call's logger (request id); default the service's. */
  log?: Logger;
  /** Keep the original and its chunk map (the result becomes a document); needs an owner and storage. */
  keepSource?: boolean;
}

/** A conversion for a caller: the converter's result and, when kept, the stored original. */
export type ConvertedForCaller = ConvertResult & { stored?: StoredSource };

/** A `.catch` that turns TooManyElementsError into the upload's 413 (rule 5 shape) and rethrows the rest. */
export function tooManyElementsAs413(ctx: IngestContext, bytes: number, requestId: string) {
  return (err: unknown): never => {
    throw err instanceof TooManyElementsError
      ? err.asRequestTooLarge(bytes, ctx.maxUploadBytes, ctx.supportEmail, requestId)
      : err;
  };
}

/**
 * Converts after the checks, in this order: missing/long file name (InputError 400), extension
 * outside SUPPORTED_EXTENSIONS (415), content over `maxUploadBytes` (413 request_too_large),
 * then what the converter refuses (400) and a result over `limits.maxElements` elements (413,
 * rule 5 shape). The time bound is cut to the deadline. The HTML comes back sanitized.
 */
export async function convertForCaller(ctx: IngestContext, input: ConvertInput): Promise<ConvertedForCaller> {
  const filename = input.filename.trim();
  if (!filename) throw new InputError("filename is required: its extension picks the converter");
  if (filename.length > MAX_FILENAME_CHARS)
    throw new InputError(`filename is longer than ${MAX_FILENAME_CHARS} characters`);
  formatForFilename(filename);
  checkSize(ctx, input.content.length, ctx.maxUploadBytes, input.requestId);
  const started = Date.now();
  const result = await convertForOwner(ctx, { ...input, filename });
  (input.log ?? ctx.log).info(
    { format: result.format, bytes: input.content.length, ms: Date.now() - started, warnings: result.warnings.length },
    "document converted",
  );
  return result;
}

/**
 * Converts without the caller checks (an upload was checked when it was read); see
 * convertForCaller. With `keepSource`, an owner and storage, a converter's source map is kept
 * with the original bytes (storeSource) and the result names it (`stored`).
 */
export async function convertForOwner(ctx: IngestContext, input: ConvertInput): Promise<ConvertedForCaller> {
  const limits = { ...ctx.limits, timeoutMs: timeBound(ctx.limits.timeoutMs, input.deadline, DEADLINE_MARGIN_MS) };
  const keepSource = input.keepSource === true && ctx.storage !== null && input.ownerId !== null;
  const result: ConvertedForCaller = await convertDocument(input.filename, input.content, limits, ctx.pool, {
    keepSource,
  }).catch(tooManyElementsAs413(ctx, input.content.length, input.requestId));
  // SVG images were already dropped by the converter worker.
  if (ctx.storage && input.ownerId)
    result.html = await extractMedia(ctx.storage, input.ownerId, result.html, result.warnings);
  if (keepSource && input.ownerId && result.source) {
    const map = result.source.map;
    const stored = await storeSource(ctx, input.ownerId, { filename: input.filename, bytes: input.content, map });
    if (stored) result.stored = stored;
  }
  return result;
}
