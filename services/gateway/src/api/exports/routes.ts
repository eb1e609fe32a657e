// The export routes: POST /v1/documents/export, /export/email-request and POST /v1/downloads.
import type { commonV1, ingestFilesV1 } from "@redline/grpc-stubs";
import { contentDisposition, NotFoundError, RedlineError, required, SchemaError } from "@redline/service-kit";
import { z } from "zod";
import { defineRoute, type Route, type RouteCall } from "../../route-registry.js";
import { pickRosterEntry } from "../sessions/mappers.js";
import { chunksToHtml, usageHeaders, usageToJson } from "../shared/mappers.js";
import { answers, EXPENSIVE, endpoint } from "../shared/routes.js";
import { toExportOptions, toTrackedChanges } from "./mappers.js";
import * as schemas from "./schemas.js";

const EXPORT_TIMEOUT_MS = 120_000;

/** The HTML, title and page setup an export starts from. */
export interface ExportSource {
  html: string;
  title: string;
  /** The document's page setup; undefined when none. */
  pageSetup?: commonV1.PageSetup;
  /** The stored document it was read from (session exports); undefined for html and uploads. */
  documentId?: string;
  /** The stored document's original and its chunks as loaded (export in place); undefined when none. */
  original?: ingestFilesV1.ExportSource;
}

// Export formats an original of the same format is written back into (md → markdown).
const IN_PLACE_FORMATS: Record<string, string> = { docx: "docx", doc: "docx", markdown: "markdown", txt: "txt" };

/**
 * Resolves the export source: `html`, else the session's document (`document_id` or the focused
 * one), else a pre-signed upload. A stored document loaded from a docx/md/txt original, exported
 * to that same format, also gets the original's reference and its chunks as loaded.
 */
export async function resolveExportSource(
  body: Pick<schemas.ExportRequestJson, "html" | "session_id" | "document_id" | "upload_id"> & { format?: string },
  call: RouteCall,
): Promise<ExportSource> {
  if (body.html !== undefined) return { html: body.html, title: "" };
  if (body.session_id) {
    const session = (await call.ctx.sessions.getSession({ sessionId: body.session_id }, call.rpc())).session;
    const entry = pickRosterEntry(session?.roster ?? [], body.document_id);
    if (body.document_id && entry?.documentId !== body.document_id && entry?.durableDocumentId !== body.document_id)
      throw new NotFoundError("Document not found in this session");
    if (!entry) throw new NotFoundError("The session has no document to export");
    if (!entry.durableDocumentId) return { html: "", title: entry.title };
    const inPlace = IN_PLACE_FORMATS[(body.format ?? "docx").toLowerCase()];
    const doc = await call.ctx.documents.getDocument(
      { documentId: entry.durableDocumentId, versionId: "", includeChunks: true, includeSource: inPlace !== undefined },
      call.rpc(),
    );
    const meta = required(doc.document, "document");
    const source = meta.source?.format === inPlace ? meta.source : undefined;
    const original = source && {
      source,
      loaded: Object.fromEntries(doc.sourceChunks.map((c) => [c.chunkId, c.html])),
    };
    return {
      html: chunksToHtml(doc.chunks),
      title: meta.title,
      pageSetup: meta.pageSetup,
      original,
      documentId: entry.durableDocumentId,
    };
  }
  if (body.upload_id) {
    const res = await call.ctx.files.convertUpload({ uploadId: body.upload_id }, call.rpc(EXPORT_TIMEOUT_MS));
    const converted = res.converted;
    return {
      html: converted?.html ?? "",
      title: converted?.title ?? "",
      pageSetup: converted?.pageSetup,
    };
  }
  throw new SchemaError([
    { type: "missing", loc: ["body", "html"], msg: "One of html, session_id or upload_id is required" },
  ]);
}

/**
 * The tracked changes of an export (options.track_changes): 422 for a format other than docx
 * and for a source without versions (html, upload_id, a session document never stored); the
 * documents service answers 422 for a since_version the document does not have. Default base:
 * the document's first version, the one it was created or loaded as.
 */
export async function resolveTrackedChanges(
  format: string,
  options: schemas.ExportOptionsJson | undefined,
  source: ExportSource,
  call: RouteCall,
): Promise<ingestFilesV1.TrackedChange[]> {
  if (!options?.track_changes) return [];
  const refuse = (msg: string): never => {
    throw new SchemaError([{ type: "value_error", loc: ["body", "options", "track_changes"], msg }]);
  };
  if (format !== "docx" && format !== "doc")
    refuse(`track_changes needs format docx (Word revisions); ${format} has no tracked changes`);
  if (!source.documentId)
    refuse("track_changes needs a stored document (session_id): an html or upload_id export has no versions");
  const res = await call.ctx.library.listChunkChanges(
    { documentId: source.documentId ?? "", sinceSeq: options.since_version ?? 0 },
    call.rpc(),
  );
  return toTrackedChanges(res.changes);
}

/** A safe download name: the caller's (without path or quotes), else the title, with the format's extension. */
export function downloadName(requested: string | undefined, title: string, extension: string): string {
  const base = (requested ?? "").split(/[\\/]/).pop()?.trim() || title.trim() || "document";
  // Control characters, quotes and backslashes would break the header.
  const clean =
    [...base]
      .filter((ch) => ch.charCodeAt(0) >= 0x20 && ch !== '"' && ch !== "\\")
      .join("")
      .slice(0, 200) || "document";
  return clean.toLowerCase().endsWith(extension) ? clean : `${clean.replace(/\.[A-Za-z0-9]{1,8}$/, "")}${extension}`;
}

/** POST /v1/documents/export → the file's bytes. */
export const exportDocumentRoute = defineRoute({
  ...endpoint("POST /v1/documents/export", "exportDocument", "Export a document", "documents", EXPENSIVE),
  description:
    "Exports `html`, a session's document (`session_id` + optional `document_id`) or a pre-signed upload as docx " +
    "(default), pdf, html, markdown or txt (`doc` = docx, legacy). Non-fatal losses are listed in X-Export-Warnings " +
    "(base64 of a JSON array of strings). Over the format's cap: 413 whose detail is an object (Errors rule 6). " +
    "`options.track_changes` (docx, session documents) writes the edits since `options.since_version` as Word " +
    "tracked changes with their authors and dates. Not billable.",
  request: { body: schemas.ExportRequestSchema },
  response: {
    description: "The file.",
    schema: z.string().meta({ format: "binary" }),
    headers: {
      "Content-Disposition": "attachment; filename=...",
      "X-Export-Warnings": "base64 of a JSON array of warning strings",
    },
  },
  errors: [404, 413, 422, 503],
  async handle({ body }, call) {
    const source = await resolveExportSource(body, call);
    const file = await call.ctx.files.exportDocument(
      await exportMessage(source, body.format, body.options, body.filename, call),
      call.rpc(EXPORT_TIMEOUT_MS),
    );
    const name = downloadName(body.filename, source.title, file.extension);
    return {
      body: "",
      headers: {
        "Content-Type": file.contentType,
        // The shared header builder: it also drops bidi controls that could disguise the extension.
        "Content-Disposition": contentDisposition("attachment", name),
        "Content-Length": String(file.content.length),
        "X-Export-Warnings": Buffer.from(JSON.stringify(file.warnings), "utf8").toString("base64"),
      },
      send: (res) => {
        res.end(file.content);
      },
    };
  },
});

const EXTENSIONS: Record<string, string> = {
  docx: ".docx",
  doc: ".docx",
  pdf: ".pdf",
  html: ".html",
  markdown: ".md",
  txt: ".txt",
};

/** The export message for a resolved source, with its tracked changes when asked for. */
async function exportMessage(
  source: ExportSource,
  format: string,
  options: schemas.ExportOptionsJson | undefined,
  filename: string | undefined,
  call: RouteCall,
): Promise<ingestFilesV1.ExportDocumentRequest> {
  return {
    html: source.html,
    format,
    title: source.title || filename || "Document",
    pageSetup: source.pageSetup,
    options: toExportOptions(options),
    trackedChanges: { changes: await resolveTrackedChanges(format, options, source, call) },
    source: source.original,
  };
}

/**
 * An application 429 also carries X-Usage-* (interface-spec, Errors rule 2): ingest's email cap
 * does not know the monthly usage, so it is added here; without billing the 429 goes as it is.
 */
async function withUsageHeaders(err: RedlineError, call: RouteCall): Promise<RedlineError> {
  try {
    const { usage } = await call.ctx.billing.getUsage({}, call.rpc());
    const headers = { ...usageHeaders(usageToJson(usage, call.principal?.plan ?? "")), ...err.headers };
    return new RedlineError(err.httpStatus, err.grpcCode, err.detail, { body: err.body, headers });
  } catch {
    return err;
  }
}

/** POST /v1/documents/export/email-request: the fallback for exports over the cap. */
export const emailExportRoute = defineRoute({
  ...endpoint(
    "POST /v1/documents/export/email-request",
    "requestEmailExport",
    "Export by email",
    "documents",
    EXPENSIVE,
  ),
  description:
    "Queues the export of a session's document; the file is stored and a download link valid 7 days is mailed to " +
    "recipient_email, or without it to the email on file of the key's user (PATCH /v1/users/me; 400 " +
    "`no_email_on_file` when none is set), under a fixed subject. The filename " +
    "is sanitized and takes the format's extension. Each account may request a limited number per hour (default 20): " +
    "past it, 429 `{detail}` with Retry-After in seconds. No size cap. Not billable.",
  request: { body: schemas.EmailExportSchema },
  ...answers(schemas.EmailExportResponseSchema, { status: 202, description: "The queued job." }, [400, 404, 429, 503]),
  async handle({ body }, call) {
    const source = await resolveExportSource(
      { session_id: body.session_id, document_id: body.document_id, format: body.format },
      call,
    );
    const filename = downloadName(body.filename, source.title, EXTENSIONS[body.format]);
    const res = await call.ctx.files
      .queueEmailExport(
        {
          export: await exportMessage(source, body.format, body.options, body.filename, call),
          filename,
          // Empty: ingest, the owner of this workflow, mails the caller's email on file.
          recipientEmail: body.recipient_email ?? "",
          sessionId: body.session_id,
        },
        call.rpc(),
      )
      .catch(async (err: unknown) => {
        throw err instanceof RedlineError && err.httpStatus === 429 ? await withUsageHeaders(err, call) : err;
      });
    return {
      body: {
        job_id: res.jobId,
        recipient_email: res.recipientEmail,
        status: "queued" as const,
        eta: (res.eta ?? new Date()).toISOString(),
        message: `The export is queued; a download link valid for 7 days will be sent to ${res.recipientEmail}.`,
      },
    };
  },
});

/** POST /v1/downloads: export now and return a pre-signed link valid 15 minutes. */
export const createDownloadRoute = defineRoute({
  ...endpoint("POST /v1/downloads", "createDownload", "Create a download link", "documents"),
  description:
    "Exports html, a session's document or a pre-signed upload, stores the file and returns a link valid 900 seconds. " +
    "No size cap. Not billable.",
  request: { body: schemas.DownloadRequestSchema },
  ...answers(schemas.DownloadResponseSchema, "The link.", [404, 503]),
  async handle({ body }, call) {
    const source = await resolveExportSource(body, call);
    const filename = downloadName(body.filename, source.title, EXTENSIONS[body.format]);
    const res = await call.ctx.files.createDownload(
      { export: await exportMessage(source, body.format, body.options, body.filename, call), filename },
      call.rpc(EXPORT_TIMEOUT_MS),
    );
    return {
      body: {
        download_url: res.downloadUrl,
        expires_at: (res.expiresAt ?? new Date()).toISOString(),
        expires_in_seconds: res.expiresInSeconds,
        filename: res.filename,
        format: res.format,
      },
    };
  },
});

/** The exports routes, in documentation order (api/index.ts mounts every area's list). */
export const exportsRoutes: Route[] = [exportDocumentRoute, emailExportRoute, createDownloadRoute];
