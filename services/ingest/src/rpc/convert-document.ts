// ConvertDocument: validate the upload, run the front door, map the result to the message.
import type { ingestV1 } from "@redline/grpc-stubs";
import { type CallContext, InputError, PayloadTooLargeError } from "@redline/service-kit";
import { extractMedia } from "../commands/media.js";
import type { FilesStorage } from "../context.js";
import { convertDocument } from "../convert.js";
import { type ConvertLimits, FORMATS_WITH_PARTS, formatForFilename, TooManyElementsError } from "../formats.js";
import type { ConverterPool } from "../sandbox/pool.js";

/** What the handler needs from the service. */
export interface ConvertDocumentDeps {
  pool: ConverterPool;
  /** Upload cap in bytes; larger content gets 413. */
  maxUploadBytes: number;
  /** Contact address put in 413 bodies. */
  supportEmail: string;
  limits: ConvertLimits;
  /** When set, embedded images of a caller's upload move to the object store (/v1/media/{id}). */
  storage?: FilesStorage | null;
}

const MAX_FILENAME_CHARS = 512;
// Leave the reply time to travel back before the caller's deadline passes.
const DEADLINE_MARGIN_MS = 250;
const MB = 1024 * 1024;

const toMb = (bytes: number) => Math.round((bytes / MB) * 100) / 100;

/**
 * Handler of IngestService.ConvertDocument (interface-spec fact 8, Errors 413/415).
 * Order of refusals: missing/long file name (400), extension outside SUPPORTED_EXTENSIONS
 * (415), content over `maxUploadBytes` (413 with the request_too_large body), then whatever
 * the converter refuses (400), and a result over `limits.maxElements` elements (413, rule 5
 * shape, detail naming the count and the limit). The HTML comes back sanitized. The
 * conversion's time bound is cut to the call's deadline.
 */
export function convertDocumentHandler(deps: ConvertDocumentDeps) {
  return async (req: ingestV1.ConvertDocumentRequest, ctx: CallContext): Promise<ingestV1.ConvertDocumentResponse> => {
    const filename = req.filename.trim();
    if (!filename) throw new InputError("filename is required: its extension picks the converter");
    if (filename.length > MAX_FILENAME_CHARS)
      throw new InputError(`filename is longer than ${MAX_FILENAME_CHARS} characters`);
    formatForFilename(filename);
    if (req.content.length > deps.maxUploadBytes) {
      throw new PayloadTooLargeError(
        toMb(req.content.length),
        toMb(deps.maxUploadBytes),
        deps.supportEmail,
        ctx.requestId,
      );
    }

    let timeoutMs = deps.limits.timeoutMs;
    if (ctx.deadline)
      timeoutMs = Math.max(1, Math.min(timeoutMs, ctx.deadline.getTime() - Date.now() - DEADLINE_MARGIN_MS));
    const started = Date.now();
    const result = await convertDocument(filename, req.content, { ...deps.limits, timeoutMs }, deps.pool).catch(
      (err: unknown) => {
        throw err instanceof TooManyElementsError
          ? err.asRequestTooLarge(req.content.length, deps.maxUploadBytes, deps.supportEmail, ctx.requestId)
          : err;
      },
    );
    ctx.log.info(
      { format: result.format, bytes: req.content.length, ms: Date.now() - started, warnings: result.warnings.length },
      "document converted",
    );
    // Calls without a principal (tools, benchmarks) keep images inline as data: URLs; SVG ones
    // were already dropped by the converter worker.
    const html =
      deps.storage && ctx.principal
        ? await extractMedia(deps.storage, ctx.principal.ownerId, result.html, result.warnings)
        : result.html;
    return {
      html,
      title: result.title,
      pageSetupJson: result.pageSetup ? JSON.stringify(result.pageSetup) : "",
      warnings: result.warnings,
      format: result.format,
      partsFromFile: FORMATS_WITH_PARTS.has(result.format),
    };
  };
}
