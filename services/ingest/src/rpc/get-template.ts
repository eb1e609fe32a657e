import type { ingestFilesV1 as pb } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import { getTemplate as find } from "../commands/templates.js";
import type { IngestContext } from "../context.js";
import { templateToMessage } from "../mappers.js";

/** FilesService.GetTemplate (unshown-parts.md, Templates): by id, else by name; with its HTML; 404 otherwise. */
export const getTemplate = async (
  ctx: IngestContext,
  req: pb.GetTemplateRequest,
  call: CallContext,
): Promise<pb.GetTemplateResponse> => {
  const row = await find(ctx, requirePrincipal(call).ownerId, req.templateRef);
  return { template: templateToMessage(row), html: row.html };
};
