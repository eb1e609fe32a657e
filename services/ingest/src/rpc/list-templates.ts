import type { ingestFilesV1 as pb } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import { listTemplates as list } from "../commands/templates.js";
import type { IngestContext } from "../context.js";
import { templateToMessage } from "../mappers.js";

/** FilesService.ListTemplates (unshown-parts.md, Templates): the owner's live templates, newest first. */
export const listTemplates = async (
  ctx: IngestContext,
  _req: pb.ListTemplatesRequest,
  call: CallContext,
): Promise<pb.ListTemplatesResponse> => ({
  templates: (await list(ctx, requirePrincipal(call).ownerId)).map(templateToMessage),
});
