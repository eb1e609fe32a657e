import { requirePrincipal } from "@redline/service-kit";
import { createTemplate as create } from "../commands/templates.js";
import { templateToMessage } from "../mappers.js";
import type { FilesRpc } from "./call.js";

/** FilesService.CreateTemplate (unshown-parts.md, Templates): 415 other extensions, 400 unreadable; the stored template. */
export const createTemplate: FilesRpc<"createTemplate"> = async (ctx, req, call) => ({
  template: templateToMessage(await create(ctx, requirePrincipal(call), req.filename, req.content)),
});
