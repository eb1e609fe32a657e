// The typed Redline client: `api` is openapi-fetch over the generated `paths` (every route, typed),
// and the helpers wrap the flows every client otherwise writes by hand (docs/api.md): uploads by
// size, sync and async chat, the progress stream, approvals, cancel, exports, versions and usage.
// Browser-safe: no node: imports (the playground bundles this entry).
import createClient, { type Client } from "openapi-fetch";
import { dispositionFilename, exportWarnings, toBase64, toBytes } from "./bytes.js";
import { errorFromResponse, RedlineApiError } from "./errors.js";
import type { paths } from "./gen/schema.js";
import { type JobStreamEvent, type StreamJobOptions, streamJobEvents } from "./stream.js";
import type {
  ApproveResponse,
  AsyncChatResponse,
  CancelJobResponse,
  ChatRequest,
  ChatResponse,
  DocumentVersionList,
  ExportFormat,
  ExportOptions,
  Job,
  RestoreVersionResponse,
  UploadDocumentResponse,
  UsageReport,
  VersionDiffResponse,
} from "./types.js";

/** Options of createRedlineClient. */
export interface RedlineClientOptions {
  /** The gateway's base URL, e.g. http://127.0.0.1:8080 (paths start with /v1). */
  baseUrl: string;
  /** `sk_…`; sent as `Authorization: Bearer`. Without it only the public routes answer. */
  apiKey?: string;
  /** A fetch to use instead of globalThis.fetch (called with a Request). */
  fetch?: (input: Request) => Promise<Response>;
  /** Sent as User-Agent where the platform allows it (Node; browsers ignore it). */
  userAgent?: string;
}

/** A file to upload: its name picks the converter (.pdf .docx .txt .rtf .md .html .htm). */
export interface UploadFile {
  filename: string;
  data: Uint8Array | Blob;
  contentType?: string;
}

/** Options of upload. */
export interface UploadOptions {
  /** Load into this session; without it a new session is created (POST /v1/sessions/init). */
  sessionId?: string;
  /** Only convert: no session, nothing stored (the answer has the HTML, title, format and warnings). */
  convertOnly?: boolean;
  openMode?: "replace" | "new_focused" | "background" | "new_tab";
  /** Include the HTML in the answer (default true). */
  returnHtml?: boolean;
  /** Files larger than this (bytes) go through a pre-signed upload instead of base64 JSON (default 16 MiB). */
  presignAboveBytes?: number;
  /** Idempotency-Key of the base64 upload (a retry with the same key opens the same document). */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/** Where an export reads the document from. */
export type ExportSource =
  | { html: string }
  | { sessionId: string; documentId?: string }
  | { documentId: string }
  | { uploadId: string };

/** Options of exportDocument: a source plus the format and its options. */
export type ExportDocumentOptions = ExportSource & {
  /** docx (default), pdf, html, markdown, txt. */
  format?: ExportFormat;
  filename?: string;
  /** docx of a stored document only: the edits since `sinceVersion` as Word tracked changes. */
  trackChanges?: boolean;
  /** A version's `seq` (listVersions); default the version the document was created or loaded as. */
  sinceVersion?: number;
  /** Other export options (paper_size, orientation, margins, watermark_text, ...). */
  options?: Omit<ExportOptions, "track_changes" | "since_version">;
  signal?: AbortSignal;
};

/** An exported file. */
export interface ExportedFile {
  bytes: Uint8Array;
  /** From Content-Disposition. */
  filename: string;
  contentType: string;
  /** Non-fatal losses (X-Export-Warnings). */
  warnings: string[];
}

/**
 * Base64 JSON grows a file by 4/3; 16 MiB becomes about 21 MiB of body, well under the platform
 * ceiling of about 32 MiB (interface-spec.md, Errors rule 7), which the pre-signed PUT avoids.
 */
export const DEFAULT_PRESIGN_ABOVE_BYTES = 16 * 1024 * 1024;

const TERMINAL_JOB_STATUSES = new Set(["completed", "failed", "cancelled"]);

/** Throws RedlineApiError for a non-2xx openapi-fetch result, else returns its data. */
function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (!result.response.ok) {
    throw new RedlineApiError(result.response.status, result.error ?? null, result.response.headers);
  }
  return result.data as T;
}

/** The Redline API: `api` for any route, helpers for the common flows. Every helper throws RedlineApiError on a non-2xx answer. */
export class RedlineClient {
  /** openapi-fetch over the generated `paths`, with the Bearer key set. */
  readonly api: Client<paths>;
  readonly baseUrl: string;
  private readonly fetchImpl: (input: Request) => Promise<Response>;
  private readonly headers: Record<string, string>;
  /** job id → session id, learned from chatAsync and job reads (the stream and approve routes need the session). */
  private readonly jobSessions = new Map<string, string>();

  constructor(opts: RedlineClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, "");
    // Called as plain functions: a browser's fetch stored on this object would throw "Illegal invocation".
    const custom = opts.fetch;
    this.fetchImpl = custom ? (input) => custom(input) : (input) => globalThis.fetch(input);
    this.headers = {
      ...(opts.apiKey && { Authorization: `Bearer ${opts.apiKey}` }),
      ...(opts.userAgent && { "User-Agent": opts.userAgent }),
    };
    this.api = createClient<paths>({ baseUrl: this.baseUrl, fetch: this.fetchImpl, headers: this.headers });
  }

  /**
   * Uploads and converts a document; by default loads it into a new session (or `sessionId`), so
   * the answer names the session, the slot and durable document ids, the version and the HTML.
   * Up to `presignAboveBytes` the file goes as base64 JSON (POST /v1/documents/upload-base64);
   * above, as a pre-signed PUT (POST /v1/uploads, PUT, POST /v1/uploads/{id}/process). Conversion
   * is synchronous: the answer is the processed document. 415 for an unsupported extension.
   */
  async upload(file: UploadFile, opts: UploadOptions = {}): Promise<UploadDocumentResponse> {
    const bytes = await toBytes(file.data);
    const sessionId = opts.convertOnly ? undefined : (opts.sessionId ?? (await this.newSession(opts.signal)));
    const common = {
      ...(sessionId && { session_id: sessionId }),
      ...(opts.openMode && { open_mode: opts.openMode }),
      return_html: opts.returnHtml ?? true,
    };
    if (bytes.length <= (opts.presignAboveBytes ?? DEFAULT_PRESIGN_ABOVE_BYTES)) {
      return unwrap(
        await this.api.POST("/v1/documents/upload-base64", {
          body: { filename: file.filename, file_base64: toBase64(bytes), ...common },
          headers: opts.idempotencyKey ? { "Idempotency-Key": opts.idempotencyKey } : {},
          signal: opts.signal,
        }),
      );
    }
    const slot = unwrap(
      await this.api.POST("/v1/uploads", {
        body: {
          filename: file.filename,
          content_type: file.contentType ?? "application/octet-stream",
          size_bytes: bytes.length,
          purpose: "document",
        },
        signal: opts.signal,
      }),
    );
    // The URL is pre-signed: no Authorization header (it would not be part of the signature).
    const put = await this.fetchImpl(
      new Request(slot.upload_url, { method: "PUT", body: bytes as Uint8Array<ArrayBuffer>, signal: opts.signal }),
    );
    if (!put.ok) throw await errorFromResponse(put);
    const processed = unwrap(
      await this.api.POST("/v1/uploads/{upload_id}/process", {
        params: { path: { upload_id: slot.upload_id } },
        body: common,
        signal: opts.signal,
      }),
    );
    return processed as UploadDocumentResponse;
  }

  /** A new empty session (POST /v1/sessions/init); its id. */
  async newSession(signal?: AbortSignal): Promise<string> {
    return unwrap(await this.api.POST("/v1/sessions/init", { body: {}, signal })).session_id;
  }

  /** POST /v1/chat: one synchronous turn (504 past the wall-clock cap). */
  async chat(body: ChatRequest, opts: { signal?: AbortSignal; idempotencyKey?: string } = {}): Promise<ChatResponse> {
    return unwrap(
      await this.api.POST("/v1/chat", {
        body,
        headers: opts.idempotencyKey ? { "Idempotency-Key": opts.idempotencyKey } : {},
        signal: opts.signal,
      }),
    );
  }

  /** POST /v1/chat/async: starts a job (202 `{job_id, session_id, status: "pending", message, usage}`). */
  async chatAsync(
    body: ChatRequest,
    opts: { signal?: AbortSignal; idempotencyKey?: string } = {},
  ): Promise<{ jobId: string; job: AsyncChatResponse }> {
    const job = unwrap(
      await this.api.POST("/v1/chat/async", {
        body,
        headers: opts.idempotencyKey ? { "Idempotency-Key": opts.idempotencyKey } : {},
        signal: opts.signal,
      }),
    );
    this.jobSessions.set(job.job_id, job.session_id);
    return { jobId: job.job_id, job };
  }

  /** GET /v1/jobs/{job_id} (404 when unknown or past retention). */
  async getJob(jobId: string, opts: { compact?: boolean; signal?: AbortSignal } = {}): Promise<Job> {
    const job = unwrap(
      await this.api.GET("/v1/jobs/{job_id}", {
        params: { path: { job_id: jobId }, query: { compact: opts.compact ?? false } },
        signal: opts.signal,
      }),
    );
    this.jobSessions.set(job.job_id, job.session_id);
    return job;
  }

  private async sessionOf(jobId: string, sessionId?: string, signal?: AbortSignal): Promise<string> {
    return sessionId ?? this.jobSessions.get(jobId) ?? (await this.getJob(jobId, { compact: true, signal })).session_id;
  }

  /**
   * The job's progress stream as an async iterator of `{id, event, data}` (document_sync,
   * intermediate, proposed_change(_batch), final, usage, error), reconnecting with Last-Event-ID
   * when the connection drops; ends after the terminal event (usage after final, or error).
   */
  async *streamJob(jobId: string, opts: StreamJobOptions = {}): AsyncGenerator<JobStreamEvent> {
    const sessionId = await this.sessionOf(jobId, opts.sessionId, opts.signal);
    yield* streamJobEvents(
      (sid, jid, lastEventId, signal) => this.openStream(sid, jid, lastEventId, signal),
      sessionId,
      jobId,
      opts,
    );
  }

  private openStream(
    sessionId: string,
    jobId: string,
    lastEventId: string | null,
    signal?: AbortSignal,
  ): Promise<Response> {
    const url = `${this.baseUrl}/v1/chat/${encodeURIComponent(sessionId)}/stream?job_id=${encodeURIComponent(jobId)}`;
    const headers: Record<string, string> = { ...this.headers, Accept: "text/event-stream" };
    if (lastEventId !== null) headers["Last-Event-ID"] = lastEventId;
    return this.fetchImpl(new Request(url, { headers, signal, cache: "no-store" }));
  }

  /**
   * Follows the job's stream to its end (`onEvent` sees every event, e.g. to approve proposed
   * changes), then returns the job as GET /v1/jobs/{id} has it. A job already terminal answers at once.
   */
  async waitForJob(
    jobId: string,
    opts: { onEvent?: (event: JobStreamEvent) => void | Promise<void>; signal?: AbortSignal; sessionId?: string } = {},
  ): Promise<Job> {
    const before = await this.getJob(jobId, { compact: true, signal: opts.signal });
    if (!TERMINAL_JOB_STATUSES.has(before.status) || opts.onEvent) {
      for await (const event of this.streamJob(jobId, { sessionId: before.session_id, signal: opts.signal })) {
        await opts.onEvent?.(event);
      }
    }
    return this.getJob(jobId, { signal: opts.signal });
  }

  /**
   * Approves proposed changes of a job awaiting approval (POST /v1/chat/{session_id}/approve):
   * `changeIds`, or every pending change. Approved changes are committed; the job resumes when
   * every pending change is decided.
   */
  async approve(
    jobId: string,
    opts: { changeIds?: string[]; sessionId?: string; signal?: AbortSignal } = {},
  ): Promise<ApproveResponse> {
    return this.decide(jobId, true, opts);
  }

  /** Denies proposed changes (`changeIds`, or every pending one); `feedback` reaches the agent. */
  async deny(
    jobId: string,
    opts: { changeIds?: string[]; feedback?: string; sessionId?: string; signal?: AbortSignal } = {},
  ): Promise<ApproveResponse> {
    return this.decide(jobId, false, opts);
  }

  private async decide(
    jobId: string,
    approved: boolean,
    opts: { changeIds?: string[]; feedback?: string; sessionId?: string; signal?: AbortSignal },
  ): Promise<ApproveResponse> {
    const sessionId = await this.sessionOf(jobId, opts.sessionId, opts.signal);
    const feedback = opts.feedback !== undefined ? { feedback: opts.feedback } : {};
    const body =
      opts.changeIds && opts.changeIds.length > 0
        ? {
            job_id: jobId,
            approved,
            changes: opts.changeIds.map((change_id) => ({ change_id, approved, ...feedback })),
          }
        : { job_id: jobId, approved, ...feedback };
    return unwrap(
      await this.api.POST("/v1/chat/{session_id}/approve", {
        params: { path: { session_id: sessionId } },
        body,
        signal: opts.signal,
      }),
    );
  }

  /**
   * POST /v1/jobs/{job_id}/cancel: the job plus `stop_state` (`stopped_here`, or `accepted`:
   * another instance stops it, poll until terminal). 409 when the job already ended.
   */
  async cancel(jobId: string, opts: { signal?: AbortSignal } = {}): Promise<CancelJobResponse> {
    return unwrap(
      await this.api.POST("/v1/jobs/{job_id}/cancel", { params: { path: { job_id: jobId } }, signal: opts.signal }),
    );
  }

  /**
   * POST /v1/documents/export: the file's bytes, name, type and warnings. A durable `documentId`
   * without a session is first opened in a new session (exports read a session's document).
   * 413 over the format's cap (code `document_too_large`: use the email export); 422 for
   * `trackChanges` with another format or a source without versions.
   */
  async exportDocument(opts: ExportDocumentOptions): Promise<ExportedFile> {
    const options: ExportOptions = {
      ...opts.options,
      ...(opts.trackChanges !== undefined && { track_changes: opts.trackChanges }),
      ...(opts.sinceVersion !== undefined && { since_version: opts.sinceVersion }),
    };
    const source = await this.exportSource(opts, opts.signal);
    const result = await this.api.POST("/v1/documents/export", {
      body: {
        ...source,
        format: opts.format ?? "docx",
        ...(opts.filename !== undefined && { filename: opts.filename }),
        ...(Object.keys(options).length > 0 && { options }),
      },
      parseAs: "arrayBuffer",
      signal: opts.signal,
    });
    const buffer = unwrap(result);
    const { headers } = result.response;
    return {
      bytes: new Uint8Array(buffer),
      filename: dispositionFilename(headers.get("content-disposition")) ?? `document.${opts.format ?? "docx"}`,
      contentType: headers.get("content-type") ?? "application/octet-stream",
      warnings: exportWarnings(headers.get("x-export-warnings")),
    };
  }

  private async exportSource(
    opts: ExportSource,
    signal?: AbortSignal,
  ): Promise<{ html?: string; session_id?: string; document_id?: string; upload_id?: string }> {
    if ("html" in opts) return { html: opts.html };
    if ("uploadId" in opts) return { upload_id: opts.uploadId };
    if ("sessionId" in opts)
      return { session_id: opts.sessionId, ...(opts.documentId && { document_id: opts.documentId }) };
    const roster = unwrap(
      await this.api.POST("/v1/sessions/init", { body: { document_ids: [opts.documentId] }, signal }),
    );
    return { session_id: roster.session_id, document_id: opts.documentId };
  }

  /** GET /v1/documents/{document_id}/versions: newest first, `{versions, total}`. */
  async listVersions(
    documentId: string,
    opts: { limit?: number; offset?: number; signal?: AbortSignal } = {},
  ): Promise<DocumentVersionList> {
    return unwrap(
      await this.api.GET("/v1/documents/{document_id}/versions", {
        params: {
          path: { document_id: documentId },
          query: {
            ...(opts.limit !== undefined && { limit: opts.limit }),
            ...(opts.offset !== undefined && { offset: opts.offset }),
          },
        },
        signal: opts.signal,
      }),
    );
  }

  /**
   * POST /v1/documents/{document_id}/versions/{version_id}/restore: a new version equal to that
   * one (not billable; 409 while a job runs on a session holding the document).
   */
  async restoreVersion(
    documentId: string,
    versionId: string,
    opts: { signal?: AbortSignal } = {},
  ): Promise<RestoreVersionResponse> {
    return unwrap(
      await this.api.POST("/v1/documents/{document_id}/versions/{version_id}/restore", {
        params: { path: { document_id: documentId, version_id: versionId } },
        signal: opts.signal,
      }),
    );
  }

  /**
   * GET /v1/documents/{document_id}/versions/{version_id}/diff?against=: the change records
   * between two versions, chunk by chunk (`against` defaults to the version's predecessor).
   */
  async diffVersions(
    documentId: string,
    versionId: string,
    against?: string,
    opts: { signal?: AbortSignal } = {},
  ): Promise<VersionDiffResponse> {
    return unwrap(
      await this.api.GET("/v1/documents/{document_id}/versions/{version_id}/diff", {
        params: {
          path: { document_id: documentId, version_id: versionId },
          ...(against !== undefined && { query: { against } }),
        },
        signal: opts.signal,
      }),
    );
  }

  /** GET /v1/usage: the usage object with the period and the recent charges (free). */
  async usage(opts: { signal?: AbortSignal } = {}): Promise<UsageReport> {
    return unwrap(await this.api.GET("/v1/usage", { signal: opts.signal }));
  }
}

/** A client for the gateway at `baseUrl`, authenticated with `apiKey`. */
export function createRedlineClient(opts: RedlineClientOptions): RedlineClient {
  return new RedlineClient(opts);
}
