// Templates (unshown-parts.md, Uploads, attachments, templates): upload, list and delete.
import { z } from "zod";
import { base64File, component } from "../shared/schemas.js";

/** POST /v1/templates/upload-base64. */
export const TemplateUploadSchema = component("TemplateUploadRequest", {
  filename: z.string().min(1).max(512),
  file_base64: base64File,
});

/** A template. */
export const TemplateSchema = component("Template", {
  template_id: z.string(),
  name: z.string(),
  filename: z.string(),
  title: z.string(),
  format: z.string(),
  html_bytes: z.number().int(),
  scope: z.enum(["user", "organization"]),
  created_at: z.string(),
});

/** GET /v1/templates. */
export const TemplateListSchema = component("TemplateList", {
  templates: z.array(TemplateSchema),
  total: z.number().int(),
});

/** Path of DELETE /v1/templates/{template_id}. */
export const TemplatePathSchema = z.object({ template_id: z.string().max(64) });

/** DELETE /v1/templates/{template_id} reply. */
export const TemplateDeletedSchema = component("TemplateDeleted", {
  template_id: z.string(),
  deleted: z.literal(true),
});
