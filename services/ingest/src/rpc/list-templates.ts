import { ownerOf } from "@redline/service-kit";
import { listTemplates as list } from "../commands/templates.js";
import { templateToMessage } from "../mappers.js";
import type { FilesRpc } from "./call.js";

/** FilesService.ListTemplates (unshown-parts.md, Templates): the owner's live templates, newest first. */
export const listTemplates: FilesRpc<"listTemplates"> = async (ctx, _req, call) => ({
  templates: (await list(ctx, ownerOf(call))).map(templateToMessage),
});
