// Templates (unshown-parts.md): upload, list, soft delete; scoped to the key's owner (the
// organization for organization keys). The agent drafts from them by name.
import type { ingestFilesV1 } from "@redline/grpc-stubs";
import type { z } from "zod";
import { defineRoute } from "../route-registry.js";
import { normalizeBase64 } from "../schemas.js";
import {
  TemplateDeletedSchema,
  TemplateListSchema,
  TemplatePathSchema,
  TemplateSchema,
  TemplateUploadSchema,
} from "../schemas-files.js";

const CONVERT_TIMEOUT_MS = 120_000;

/** The JSON of a template. */
export function templateToJson(t: ingestFilesV1.Template): z.output<typeof TemplateSchema> {
  return {
    template_id: t.templateId,
    name: t.name,
    filename: t.filename,
    title: t.title,
    format: t.format,
    html_bytes: t.htmlBytes,
    scope: t.organizationScoped ? "organization" : "user",
    created_at: (t.createdAt ?? new Date()).toISOString(),
  };
}

/** POST /v1/templates/upload-base64 `{filename, file_base64}`. */
export const uploadTemplateRoute = defineRoute({
  method: "post",
  path: "/v1/templates/upload-base64",
  operationId: "uploadTemplate",
  summary: "Upload a template",
  description: 'Same formats as document uploads. The agent can draft from it: `draft from template "name"`.',
  tags: ["templates"],
  auth: true,
  body: TemplateUploadSchema,
  response: { status: 201, description: "The stored template.", schema: TemplateSchema },
  errors: [400, 415, 503],
  async handle({ body }, call) {
    const content = Buffer.from(normalizeBase64(body.file_base64), "base64");
    const res = await call.ctx.files.createTemplate({ filename: body.filename, content }, call.rpc(CONVERT_TIMEOUT_MS));
    return { body: templateToJson(res.template as ingestFilesV1.Template) };
  },
});

/** GET /v1/templates. */
export const listTemplatesRoute = defineRoute({
  method: "get",
  path: "/v1/templates",
  operationId: "listTemplates",
  summary: "List templates",
  tags: ["templates"],
  auth: true,
  response: { description: "Templates, newest first.", schema: TemplateListSchema },
  errors: [503],
  async handle(_input, call) {
    const res = await call.ctx.files.listTemplates({}, call.rpc());
    const templates = res.templates.map(templateToJson);
    return { body: { templates, total: templates.length } };
  },
});

/** DELETE /v1/templates/{template_id} (soft). */
export const deleteTemplateRoute = defineRoute({
  method: "delete",
  path: "/v1/templates/{template_id}",
  operationId: "deleteTemplate",
  summary: "Delete a template",
  tags: ["templates"],
  auth: true,
  params: TemplatePathSchema,
  response: { description: "Deleted (soft).", schema: TemplateDeletedSchema },
  errors: [404, 503],
  async handle({ params }, call) {
    await call.ctx.files.deleteTemplate({ templateId: params.template_id }, call.rpc());
    return { body: { template_id: params.template_id, deleted: true as const } };
  },
});
