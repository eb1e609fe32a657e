// The upload routes: POST /v1/documents/upload(-base64), pre-signed uploads (/v1/uploads) and
// GET /v1/media/{media_id}.
import type { ingestV1 } from "@redline/grpc-stubs";
import { InputError, mediaResponseHeaders, required } from "@redline/service-kit";
import { z } from "zod";
import { defineRoute, type Route, type RouteCall } from "../../route-registry.js";
import { createAttachment } from "../attachments/routes.js";
import { answers, EXPENSIVE, EXPENSIVE_IDEMPOTENT, endpoint } from "../shared/routes.js";
import { normalizeBase64 } from "../shared/schemas.js";
import { curlExample, pageSetup, rosterToJson } from "./mappers.js";
import * as schemas from "./schemas.js";

// Big files take longer to convert than the default RPC deadline.
const CONVERT_TIMEOUT_MS = 120_000;

/**
 * Converts a file with ingest (415 for other extensions, 413 over the cap, 400 unreadable).
 * `keepSource`: the result will be stored as a document, so ingest keeps a md/txt/docx original
 * (its SourceRef comes back in `source`) for exports in place.
 */
export async function convertUpload(
  call: RouteCall,
  filename: string,
  content: Buffer,
  keepSource = false,
): Promise<ingestV1.ConvertDocumentResponse> {
  if (!filename.trim()) throw new InputError("The file has no name: its extension picks the converter");
  return call.ctx.ingest.convertDocument({ filename, content, keepSource }, call.rpc(CONVERT_TIMEOUT_MS));
}

/**
 * Stores converted content and opens it in a session. `replace` loads it into the focused
 * document as a new version (a blank or missing focused tab gets a new document in its slot);
 * `new_focused`/`new_tab` add a focused tab; `background` adds a tab and keeps the focus.
 */
export async function loadIntoSession(
  call: RouteCall,
  converted: ingestV1.ConvertDocumentResponse,
  sessionId: string,
  openMode: schemas.OpenMode,
  returnHtml: boolean,
): Promise<schemas.UploadDocumentResponseJson> {
  const res = await call.ctx.workspace.storeAndAttach(
    {
      sessionId,
      openMode,
      html: converted.html,
      title: converted.title,
      pageSetup: converted.pageSetup,
      keepParts: converted.partsFromFile,
      returnHtml,
      source: converted.source,
      // A retry after a 5xx that followed the create finds that document instead of making another.
      idempotencyKey: call.retryKey ? `upload:${call.retryKey}` : undefined,
    },
    call.rpc(CONVERT_TIMEOUT_MS),
  );
  return {
    session_id: res.sessionId,
    document_id: res.slotId,
    durable_document_id: res.durableDocumentId,
    version_id: res.versionId,
    chunks_count: res.chunkCount,
    title: res.title,
    format: converted.format,
    page_setup: pageSetup(res.pageSetup),
    ...(returnHtml && { html: res.html }),
    roster: rosterToJson(res.roster),
    warnings: converted.warnings,
  };
}

/** POST /v1/documents/upload: multipart `file` (+ session_id, open_mode) → HTML, roster, page_setup. */
export const uploadDocumentRoute = defineRoute({
  ...endpoint(
    "POST /v1/documents/upload",
    "uploadDocument",
    "Upload a document (multipart)",
    "documents",
    EXPENSIVE_IDEMPOTENT,
  ),
  description:
    "multipart/form-data with a `file` part (.pdf .docx .txt .rtf .md .html .htm), optional `session_id` (minted when " +
    "omitted) and `open_mode` (replace | new_focused | background | new_tab). Not billable.",
  request: { body: schemas.UploadDocumentFormSchema },
  bodyMediaType: "multipart/form-data",
  ...answers(
    schemas.UploadDocumentResponseSchema,
    "The loaded document, the session's roster and the page setup.",
    [400, 403, 415, 503],
  ),
  async handle({ body }, call) {
    const converted = await convertUpload(call, body.file.filename, body.file.content, true);
    return { body: await loadIntoSession(call, converted, body.session_id ?? "", body.open_mode, body.return_html) };
  },
});

/** POST /v1/documents/upload-base64: with session_id load it; without, convert only. */
export const uploadDocumentBase64Route = defineRoute({
  ...endpoint(
    "POST /v1/documents/upload-base64",
    "uploadDocumentBase64",
    "Upload a document (base64)",
    "documents",
    EXPENSIVE_IDEMPOTENT,
  ),
  description:
    "With `session_id` the file is loaded into the session (open_mode as for multipart) and the reply has " +
    "chunks_count, version_id, page_setup and, with return_html, the HTML. Without it, the file is only converted.",
  request: { body: schemas.UploadDocumentBase64Schema },
  ...answers(schemas.UploadDocumentResponseSchema, "The conversion, or the loaded document.", [400, 403, 415, 503]),
  async handle({ body }, call) {
    const content = Buffer.from(normalizeBase64(body.file_base64), "base64");
    const converted = await convertUpload(call, body.filename, content, Boolean(body.session_id));
    return { body: await conversionReply(call, converted, body) };
  },
});

/**
 * The reply of the base64 and pre-signed upload routes: the conversion alone without a session,
 * else the document loaded into the session (open_mode as for multipart).
 */
async function conversionReply(
  call: RouteCall,
  converted: ingestV1.ConvertDocumentResponse,
  opts: { session_id?: string | null; open_mode: schemas.OpenMode; return_html: boolean },
) {
  if (!opts.session_id) {
    return {
      title: converted.title,
      format: converted.format,
      page_setup: pageSetup(converted.pageSetup),
      html: converted.html,
      warnings: converted.warnings,
    };
  }
  return loadIntoSession(call, converted, opts.session_id, opts.open_mode, opts.return_html);
}

/** POST /v1/uploads: a pre-signed PUT URL valid 300 s for one file of at most 100 MB. */
export const createUploadRoute = defineRoute({
  ...endpoint("POST /v1/uploads", "createUpload", "Create a pre-signed upload", "uploads"),
  description:
    "Returns an upload_url to PUT the file's bytes to (no Authorization header), valid 300 seconds; then call " +
    "POST /v1/uploads/{upload_id}/process. purpose: document (default), attachment or export-html.",
  request: { body: schemas.CreateUploadSchema },
  ...answers(schemas.CreateUploadResponseSchema, "The upload slot.", [400, 415, 503]),
  async handle({ body }, call) {
    const res = await call.ctx.files.createUpload(
      { filename: body.filename, contentType: body.content_type, sizeBytes: body.size_bytes, purpose: body.purpose },
      call.rpc(),
    );
    return {
      body: {
        upload_id: res.uploadId,
        upload_url: res.uploadUrl,
        expires_at: (res.expiresAt ?? new Date()).toISOString(),
        expires_in_seconds: res.expiresInSeconds,
        max_size_bytes: res.maxSizeBytes,
        curl_example: curlExample(body.filename, res.uploadUrl),
      },
    };
  },
});

/**
 * POST /v1/uploads/{upload_id}/process, by the upload's purpose: an attachment upload becomes the
 * session's attachment_processing job, answered as POST /v1/attachments/upload answers (session
 * minted when omitted); a document (or export-html) upload is converted, and with session_id
 * loaded there. 404 when the upload is unknown, expired or was never PUT.
 */
export const processUploadRoute = defineRoute({
  ...endpoint(
    "POST /v1/uploads/{upload_id}/process",
    "processUpload",
    "Process a pre-signed upload",
    "uploads",
    EXPENSIVE,
  ),
  description:
    "Processes the file PUT to the upload's URL. purpose document: converted; with session_id it is loaded into " +
    "the session like POST /v1/documents/upload, without it only converted. purpose attachment: attached to " +
    "session_id (minted when omitted) like POST /v1/attachments/upload, answering its attachment_processing job " +
    "(follow it with GET /v1/jobs/{job_id}); parse_mode, return_html and open_mode do not apply. parse_mode takes " +
    '"auto" only (the converter is chosen by the extension; another value is a 422). 404 when the ' +
    "upload is unknown, expired or was never PUT.",
  request: { params: schemas.UploadPathSchema, body: schemas.ProcessUploadSchema },
  ...answers(
    schemas.ProcessUploadResponseSchema,
    "The conversion or the loaded document; for an attachment upload, its attachment_processing job.",
    [400, 403, 404, 415, 503],
  ),
  async handle({ params, body }, call) {
    const upload = await call.ctx.files.getUpload({ uploadId: params.upload_id }, call.rpc());
    if (upload.purpose === "attachment") {
      return { body: await createAttachment(call, body.session_id ?? "", { uploadId: upload.uploadId }) };
    }
    const res = await call.ctx.files.convertUpload(
      { uploadId: params.upload_id, keepSource: Boolean(body.session_id) },
      call.rpc(CONVERT_TIMEOUT_MS),
    );
    const converted = required(res.converted, "converted");
    return { body: await conversionReply(call, converted, body) };
  },
});

/** GET /v1/media/{media_id}: an image of the caller's documents (owner scope). */
export const getMediaRoute = defineRoute({
  ...endpoint("GET /v1/media/{media_id}", "getMedia", "Read an image of a document", "documents"),
  description:
    "Images of uploaded documents are stored once by content hash and referenced from the HTML as " +
    "/v1/media/{sha256}. Only the owner (or their organization) can read them; 404 otherwise. Served with " +
    "Content-Security-Policy `default-src 'none'; sandbox` and nosniff; PNG, JPEG, GIF, WebP, AVIF and BMP inline, " +
    "other image types (EMF, WMF) as attachments. SVG is never stored (its images are removed on upload).",
  request: { params: schemas.MediaPathSchema },
  ...answers(z.string().meta({ format: "binary" }), "The image bytes.", [404, 503]),
  async handle({ params }, call) {
    const media = await call.ctx.files.getMedia({ mediaId: params.media_id }, call.rpc());
    return {
      body: "",
      headers: {
        // Raster images inline, anything else as an attachment (SVG stored before it was refused
        // as application/octet-stream); always sandboxed and unsniffed (docs/security.md).
        ...mediaResponseHeaders(params.media_id, media.contentType),
        "Content-Length": String(media.content.length),
        // Content-addressed: the bytes behind an id never change.
        "Cache-Control": "private, max-age=31536000, immutable",
      },
      send: (res) => {
        res.end(media.content);
      },
    };
  },
});

/** The uploads routes, in documentation order (api/index.ts mounts every area's list). */
export const uploadsRoutes: Route[] = [
  uploadDocumentRoute,
  uploadDocumentBase64Route,
  createUploadRoute,
  processUploadRoute,
  getMediaRoute,
];
