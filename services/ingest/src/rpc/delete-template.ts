import { ownerOf } from "@redline/service-kit";
import { deleteTemplate as remove } from "../commands/templates.js";
import { templateToMessage } from "../mappers.js";
import type { FilesRpc } from "./call.js";

/** FilesService.DeleteTemplate (unshown-parts.md, Templates): soft delete; 404 unknown, deleted or another owner's. */
export const deleteTemplate: FilesRpc<"deleteTemplate"> = async (ctx, req, call) => ({
  template: templateToMessage(await remove(ctx, ownerOf(call), req.templateId)),
});
