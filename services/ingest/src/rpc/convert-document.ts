import { convertForCaller } from "../commands/conversions.js";
import { convertedToMessage } from "../mappers.js";
import type { IngestRpc } from "./call.js";

/**
 * IngestService.ConvertDocument (interface-spec fact 8, Errors 413/415): bytes → sanitized HTML.
 * 400 missing/long filename or unreadable file, 415 other extensions, 413 over the upload cap or
 * `limits.maxElements`. Callers with a principal get their images moved to /v1/media/{id}, and
 * with `keep_source` their md/txt/docx original kept (the response's `source`).
 */
export const convertDocument: IngestRpc<"convertDocument"> = async (ctx, req, call) => {
  const input = {
    filename: req.filename,
    content: req.content,
    requestId: call.requestId,
    log: call.log,
    keepSource: req.keepSource === true,
  };
  const result = await convertForCaller(ctx, {
    ...input,
    ownerId: call.principal?.ownerId ?? null,
    deadline: call.deadline,
  });
  return convertedToMessage(result);
};
