// Ingest templates as JSON.
import type { ingestFilesV1 } from "@redline/grpc-stubs";
import type { z } from "zod";
import type { TemplateSchema } from "./schemas.js";

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
