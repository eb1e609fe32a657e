// Templates (unshown-parts.md, Templates): documents kept to draft new ones from. Converted once
// on upload, scoped to the owner (the organization for organization keys), soft-deleted.
import { InputError, NotFoundError, type Principal } from "@redline/service-kit";
import type { IngestContext } from "../context.js";
import { convertDocument } from "../convert.js";
import * as templates from "../db/store/templates.js";
import type { TemplateRow } from "../db/tables.js";
import { baseTitle, formatForFilename } from "../formats.js";
import { requireStorage } from "../storage.js";
import { extractMedia } from "./media.js";
import { newId } from "./shared.js";

/**
 * Converts and stores a template named after `rawFilename`'s last path segment. InputError
 * (400) without a filename or for an unreadable file, UnsupportedMediaTypeError (415) for
 * other extensions; images move to the owner's media.
 */
export async function createTemplate(
  ctx: IngestContext,
  principal: Principal,
  rawFilename: string,
  content: Buffer,
): Promise<TemplateRow> {
  const filename = rawFilename.split(/[\\/]/).pop()?.trim() ?? "";
  if (!filename) throw new InputError("filename is required: its extension picks the converter");
  formatForFilename(filename);
  const storage = requireStorage(ctx);
  const converted = await convertDocument(filename, content, ctx.limits, ctx.pool);
  return templates.insertTemplate(storage.db, {
    id: newId("tpl"),
    owner_id: principal.ownerId,
    organization_id: principal.organizationId,
    name: baseTitle(filename),
    filename,
    title: converted.title,
    format: converted.format,
    html: await extractMedia(storage, principal.ownerId, converted.html),
  });
}

/** The owner's live templates, newest first. */
export function listTemplates(ctx: IngestContext, ownerId: string): Promise<TemplateRow[]> {
  return templates.listTemplates(requireStorage(ctx).db, ownerId);
}

/** Soft-deletes one; NotFoundError (404) when unknown, already deleted or another owner's. */
export async function deleteTemplate(ctx: IngestContext, ownerId: string, id: string): Promise<TemplateRow> {
  const row = await templates.softDeleteTemplate(requireStorage(ctx).db, ownerId, id);
  if (!row) throw new NotFoundError("Template not found");
  return row;
}

/** By id, else by name (exact, case-insensitive, then contains); NotFoundError (404) otherwise. */
export async function getTemplate(ctx: IngestContext, ownerId: string, rawRef: string): Promise<TemplateRow> {
  const { db } = requireStorage(ctx);
  const ref = rawRef.trim();
  const row = ref ? await templates.findTemplate(db, ownerId, ref) : undefined;
  if (!row) throw new NotFoundError(`Template not found: ${ref}`);
  return row;
}
