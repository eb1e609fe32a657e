// Templates (unshown-parts.md): documents kept to draft new ones from. Converted once on upload,
// scoped to the owner (the organization for organization keys), soft-deleted.
import type { ingestFilesV1 } from "@redline/grpc-stubs";
import { type CallContext, InputError, NotFoundError, requirePrincipal } from "@redline/service-kit";
import { type FilesContext, newId, requireStorage } from "../context.js";
import { convertDocument } from "../convert.js";
import type { TemplateRow } from "../db/tables.js";
import { baseTitle, formatForFilename } from "../formats.js";
import { extractMedia } from "./media.js";

function toMessage(row: TemplateRow): ingestFilesV1.Template {
  return {
    templateId: row.id,
    name: row.name,
    filename: row.filename,
    title: row.title,
    format: row.format,
    createdAt: row.created_at,
    htmlBytes: Buffer.byteLength(row.html, "utf8"),
    organizationScoped: row.organization_id !== "",
  };
}

/** FilesService.CreateTemplate: 415 for other extensions, 400 unreadable, else the stored template. */
export function createTemplateHandler(ctx: FilesContext) {
  return async (
    req: ingestFilesV1.CreateTemplateRequest,
    call: CallContext,
  ): Promise<ingestFilesV1.CreateTemplateResponse> => {
    const principal = requirePrincipal(call);
    const filename = req.filename.split(/[\\/]/).pop()?.trim() ?? "";
    if (!filename) throw new InputError("filename is required: its extension picks the converter");
    formatForFilename(filename);
    const storage = requireStorage(ctx);
    const converted = await convertDocument(filename, req.content, ctx.limits, ctx.pool);
    const [row] = await storage
      .db<TemplateRow>("templates")
      .insert({
        id: newId("tpl"),
        owner_id: principal.ownerId,
        organization_id: principal.organizationId,
        name: baseTitle(filename),
        filename,
        title: converted.title,
        format: converted.format,
        html: await extractMedia(storage, principal.ownerId, converted.html),
      })
      .returning("*");
    return { template: toMessage(row) };
  };
}

/** FilesService.ListTemplates: the owner's live templates, newest first. */
export function listTemplatesHandler(ctx: FilesContext) {
  return async (
    _req: ingestFilesV1.ListTemplatesRequest,
    call: CallContext,
  ): Promise<ingestFilesV1.ListTemplatesResponse> => {
    const principal = requirePrincipal(call);
    const rows = await requireStorage(ctx)
      .db<TemplateRow>("templates")
      .where({ owner_id: principal.ownerId })
      .whereNull("deleted_at")
      .orderBy([
        { column: "created_at", order: "desc" },
        { column: "id", order: "desc" },
      ]);
    return { templates: rows.map(toMessage) };
  };
}

/** FilesService.DeleteTemplate: soft delete; 404 when unknown, already deleted or another owner's. */
export function deleteTemplateHandler(ctx: FilesContext) {
  return async (
    req: ingestFilesV1.DeleteTemplateRequest,
    call: CallContext,
  ): Promise<ingestFilesV1.DeleteTemplateResponse> => {
    const principal = requirePrincipal(call);
    const [row] = await requireStorage(ctx)
      .db<TemplateRow>("templates")
      .where({ id: req.templateId, owner_id: principal.ownerId })
      .whereNull("deleted_at")
      .update({ deleted_at: new Date() })
      .returning("*");
    if (!row) throw new NotFoundError("Template not found");
    return { template: toMessage(row) };
  };
}

/** FilesService.GetTemplate: by id, else by name (exact, case-insensitive, then contains). */
export function getTemplateHandler(ctx: FilesContext) {
  return async (
    req: ingestFilesV1.GetTemplateRequest,
    call: CallContext,
  ): Promise<ingestFilesV1.GetTemplateResponse> => {
    const principal = requirePrincipal(call);
    const ref = req.templateRef.trim();
    const live = () =>
      requireStorage(ctx).db<TemplateRow>("templates").where({ owner_id: principal.ownerId }).whereNull("deleted_at");
    const escaped = ref.replace(/[\\%_]/g, "\\$&");
    const row =
      (await live().where({ id: ref }).first()) ??
      (await live().whereILike("name", escaped).orderBy("created_at", "desc").first()) ??
      (await live().whereILike("filename", escaped).orderBy("created_at", "desc").first()) ??
      (await live().whereILike("name", `%${escaped}%`).orderBy("created_at", "desc").first());
    if (!ref || !row) throw new NotFoundError(`Template not found: ${ref}`);
    return { template: toMessage(row), html: row.html };
  };
}
