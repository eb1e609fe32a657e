import type { ingestFilesV1 as pb } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import { deleteTemplate as remove } from "../commands/templates.js";
import type { IngestContext } from "../context.js";
import { templateToMessage } from "../mappers.js";

/** FilesService.DeleteTemplate (unshown-parts.md, Templates): soft delete; 404 unknown, deleted or another owner's. */
export const deleteTemplate = async (
  ctx: IngestContext,
  req: pb.DeleteTemplateRequest,
  call: CallContext,
): Promise<pb.DeleteTemplateResponse> => ({
  template: templateToMessage(await remove(ctx, requirePrincipal(call).ownerId, req.templateId)),
});
