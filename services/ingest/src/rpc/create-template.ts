import type { ingestFilesV1 as pb } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import { createTemplate as create } from "../commands/templates.js";
import type { IngestContext } from "../context.js";
import { templateToMessage } from "../mappers.js";

/** FilesService.CreateTemplate (unshown-parts.md, Templates): 415 other extensions, 400 unreadable; the stored template. */
export const createTemplate = async (
  ctx: IngestContext,
  req: pb.CreateTemplateRequest,
  call: CallContext,
): Promise<pb.CreateTemplateResponse> => ({
  template: templateToMessage(await create(ctx, requirePrincipal(call), req.filename, req.content)),
});
