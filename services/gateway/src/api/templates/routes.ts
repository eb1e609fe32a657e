// The template routes under /v1/templates.
import { required } from "@redline/service-kit";
import { defineRoute, type Route } from "../../route-registry.js";
import { answers, EXPENSIVE, endpoint } from "../shared/routes.js";
import { normalizeBase64 } from "../shared/schemas.js";
import { templateToJson } from "./mappers.js";
import * as schemas from "./schemas.js";

// Big files take longer to convert than the default RPC deadline.
const CONVERT_TIMEOUT_MS = 120_000;

/** POST /v1/templates/upload-base64 `{filename, file_base64}`. */
export const uploadTemplateRoute = defineRoute({
  ...endpoint("POST /v1/templates/upload-base64", "uploadTemplate", "Upload a template", "templates", EXPENSIVE),
  description: 'Same formats as document uploads. The agent can draft from it: `draft from template "name"`.',
  request: { body: schemas.TemplateUploadSchema },
  ...answers(schemas.TemplateSchema, { status: 201, description: "The stored template." }, [400, 415, 503]),
  async handle({ body }, call) {
    const content = Buffer.from(normalizeBase64(body.file_base64), "base64");
    const res = await call.ctx.files.createTemplate({ filename: body.filename, content }, call.rpc(CONVERT_TIMEOUT_MS));
    return { body: templateToJson(required(res.template, "template")) };
  },
});

/** GET /v1/templates. */
export const listTemplatesRoute = defineRoute({
  ...endpoint("GET /v1/templates", "listTemplates", "List templates", "templates"),
  ...answers(schemas.TemplateListSchema, "Templates, newest first.", [503]),
  async handle(_input, call) {
    const res = await call.ctx.files.listTemplates({}, call.rpc());
    const templates = res.templates.map(templateToJson);
    return { body: { templates, total: templates.length } };
  },
});

/** DELETE /v1/templates/{template_id} (soft). */
export const deleteTemplateRoute = defineRoute({
  ...endpoint("DELETE /v1/templates/{template_id}", "deleteTemplate", "Delete a template", "templates"),
  request: { params: schemas.TemplatePathSchema },
  ...answers(schemas.TemplateDeletedSchema, "Deleted (soft).", [404, 503]),
  async handle({ params }, call) {
    await call.ctx.files.deleteTemplate({ templateId: params.template_id }, call.rpc());
    return { body: { template_id: params.template_id, deleted: true as const } };
  },
});

/** The templates routes, in documentation order (api/index.ts mounts every area's list). */
export const templatesRoutes: Route[] = [uploadTemplateRoute, listTemplatesRoute, deleteTemplateRoute];
