import { ownerOf } from "@redline/service-kit";
import { getTemplate as find } from "../commands/templates.js";
import { templateToMessage } from "../mappers.js";
import type { FilesRpc } from "./call.js";

/** FilesService.GetTemplate (unshown-parts.md, Templates): by id, else by name; with its HTML; 404 otherwise. */
export const getTemplate: FilesRpc<"getTemplate"> = async (ctx, req, call) => {
  const row = await find(ctx, ownerOf(call), req.templateRef);
  return { template: templateToMessage(row), html: row.html };
};
