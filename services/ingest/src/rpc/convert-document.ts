import type { ingestV1 as pb } from "@redline/grpc-stubs";
import type { CallContext } from "@redline/service-kit";
import { convertForCaller } from "../commands/conversions.js";
import type { IngestContext } from "../context.js";
import { convertedToMessage } from "../mappers.js";

/**
 * IngestService.ConvertDocument (interface-spec fact 8, Errors 413/415): bytes → sanitized HTML.
 * 400 missing/long filename or unreadable file, 415 other extensions, 413 over the upload cap or
 * `limits.maxElements`. Callers with a principal get their images moved to /v1/media/{id}.
 */
export const convertDocument = async (
  ctx: IngestContext,
  req: pb.ConvertDocumentRequest,
  call: CallContext,
): Promise<pb.ConvertDocumentResponse> => {
  const input = { filename: req.filename, content: req.content, requestId: call.requestId, log: call.log };
  const result = await convertForCaller(ctx, {
    ...input,
    ownerId: call.principal?.ownerId ?? null,
    deadline: call.deadline,
  });
  return convertedToMessage(result);
};
