// The MCP tools: each is one or two calls of the /v1 HTTP API over the loopback (loopback.ts), or,
// for read_document, the documents service's ReadDocument (the chunk model's own outline, section
// and table functions; no /v1 route reads below a whole document). Inputs are validated by the SDK
// with the schemas of schemas.ts before a tool runs: a bad value is an isError result naming the
// field. Whatever a tool meets afterwards (a 4xx of the API, a service error) is an isError result
// too, never a JSON-RPC failure and never a crash.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { documentsV1 } from "@redline/grpc-stubs";
import { RedlineError, type ValidationIssue } from "@redline/service-kit";
import { toHttpReply } from "../../error-handler.js";
import type { RouteCall } from "../../route-registry.js";
import { ChatResponseSchema } from "../chat/schemas.js";
import {
  DocumentListResponseSchema,
  RestoreVersionResponseSchema,
  VersionListResponseSchema,
} from "../documents/schemas.js";
import { DownloadResponseSchema } from "../exports/schemas.js";
import { ApproveResponseSchema, AsyncChatResponseSchema, JobSchema } from "../jobs/schemas.js";
import { RosterResponseSchema, SaveResponseSchema } from "../roster/schemas.js";
import { ApiError, describeError, type RedlineHttp, seg } from "./loopback.js";
import * as schemas from "./schemas.js";

/** What a tool runs with: the caller's HTTP API and the MCP request's own route call. */
export interface ToolContext {
  http: RedlineHttp;
  call: RouteCall;
  /** Aborted when the MCP client goes away. */
  signal: AbortSignal;
}

/** A tool-input problem found after the SDK's schema check (a field another one requires). */
class ToolInputError extends Error {}

/** How often edit_document looks at an async job, and how long at most (the chat's 30-minute cap). */
const JOB_POLL_MS = 250;
const JOB_WAIT_MS = 30 * 60_000;

/** The tool result of a value: JSON text (what every client shows) and the same as structured content. */
function ok(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value, null, 2) }], structuredContent: value };
}

/** The isError result of whatever a tool met, in words that name the field or the API's answer. */
function failure(err: unknown, call: RouteCall, rename: Record<string, string> = {}): CallToolResult {
  let text: string;
  if (err instanceof ApiError || err instanceof ToolInputError) text = err.message;
  else if (err instanceof RedlineError && Array.isArray(err.detail)) {
    // A service's 422 (ReadDocument) names its request field; say the tool's name for it.
    const issues = (err.detail as ValidationIssue[]).map((issue) => ({
      ...issue,
      loc: issue.loc.map((part) => rename[String(part)] ?? part),
    }));
    text = describeError(err.httpStatus, { detail: issues });
  } else {
    const reply = toHttpReply(err, (level, msg) => call.log[level]({ err }, msg));
    text = describeError(reply.status, reply.body);
  }
  return { content: [{ type: "text", text }], isError: true };
}

/** Runs a tool body, turning anything it throws into an isError result. */
async function run(
  call: RouteCall,
  body: () => Promise<Record<string, unknown>>,
  rename?: Record<string, string>,
): Promise<CallToolResult> {
  try {
    return ok(await body());
  } catch (err) {
    return failure(err, call, rename);
  }
}

/** POST /v1/sessions/init with one document: the new session's id. */
async function newSessionWith(http: RedlineHttp, documentId: string): Promise<string> {
  const roster = await http.call(RosterResponseSchema, "POST", "/v1/sessions/init", {
    body: { document_ids: [documentId] },
  });
  return roster.session_id;
}

/** The session a tool works in: the given one, else a new one holding `documentId`. */
async function sessionFor(http: RedlineHttp, sessionId: string | undefined, documentId: string | undefined) {
  if (sessionId) return sessionId;
  if (!documentId) throw new ToolInputError("document_id: required when session_id is omitted");
  return newSessionWith(http, documentId);
}

const READ_MODES: Record<(typeof schemas.READ_MODES)[number], documentsV1.ReadMode> = {
  outline: documentsV1.ReadMode.READ_MODE_OUTLINE,
  section: documentsV1.ReadMode.READ_MODE_SECTION,
  chunks: documentsV1.ReadMode.READ_MODE_CHUNKS,
  table_rows: documentsV1.ReadMode.READ_MODE_TABLE_ROWS,
};

/** Waits until an async chat job stops running: awaiting approval, or ended. */
async function settledJob(http: RedlineHttp, jobId: string, signal: AbortSignal) {
  const deadline = Date.now() + JOB_WAIT_MS;
  for (;;) {
    const job = await http.call(JobSchema, "GET", `/v1/jobs/${seg(jobId)}`);
    if (job.status !== "pending" && job.status !== "in_progress") return job;
    if (Date.now() > deadline || signal.aborted) return job;
    await new Promise((resolve) => setTimeout(resolve, JOB_POLL_MS));
  }
}

/** Registers the document tools on `server` for one caller. */
export function registerTools(server: McpServer, tool: ToolContext): void {
  const { http, call } = tool;

  server.registerTool(
    "list_documents",
    {
      title: "List documents",
      description: "The caller's saved documents (the Files view), most recently updated first, metadata only.",
      inputSchema: schemas.ListDocumentsInput,
      annotations: { readOnlyHint: true },
    },
    (args) =>
      run(call, async () => {
        const res = await http.call(DocumentListResponseSchema, "GET", "/v1/documents", { query: args });
        return {
          documents: res.documents.map((d) => ({
            document_id: d.document_id,
            title: d.title,
            version_id: d.version_id,
            chunk_count: d.chunk_count,
            section_count: d.section_count,
            status: d.status,
            updated_at: d.updated_at,
            session_count: d.session_count,
            uri: `redline://documents/${d.document_id}`,
          })),
          total: res.total,
          limit: res.limit,
          offset: res.offset,
        };
      }),
  );

  server.registerTool(
    "open_document",
    {
      title: "Open a document",
      description:
        "Opens a saved document in a session (attached, not copied), focused; creates the session when " +
        "session_id is omitted. Returns the session id for edit_document, save_document and export_document.",
      inputSchema: schemas.OpenDocumentInput,
    },
    ({ document_id, session_id }) =>
      run(call, async () => {
        const roster = session_id
          ? await http.call(RosterResponseSchema, "POST", `/v1/sessions/${seg(session_id)}/documents/open`, {
              body: { document_ids: [document_id] },
            })
          : await http.call(RosterResponseSchema, "POST", "/v1/sessions/init", {
              body: { document_ids: [document_id] },
            });
        return {
          session_id: roster.session_id,
          focused_document_id: roster.focused_document_id,
          documents: roster.documents.map((d) => ({
            document_id: d.document_id,
            durable_document_id: d.durable_document_id,
            title: d.title,
            chunk_count: d.chunk_count,
            section_count: d.section_count,
            focused: d.focused,
            version_id: d.version_id,
          })),
        };
      }),
  );

  server.registerTool(
    "read_document",
    {
      title: "Read a document",
      description:
        "Reads a saved document as the editing agent does: mode outline (chunk ids, tags as #-headings, text " +
        "previews; paged with from_chunk_id), section (chunk_id of a heading: it and its section's chunks), chunks " +
        "(chunk_ids: their full HTML), table_rows (a table by chunk_id or its number `table`, rows row_offset.. " +
        "row_offset+row_limit). Sections and chunks stop at about 200 KB; left_out_chunk_ids says what to read next.",
      inputSchema: schemas.ReadDocumentInput,
      annotations: { readOnlyHint: true },
    },
    (args) =>
      run(
        call,
        async () => {
          if (args.mode === "section" && !args.chunk_id)
            throw new ToolInputError("chunk_id: required for mode section");
          if (args.mode === "chunks" && !args.chunk_ids)
            throw new ToolInputError("chunk_ids: required for mode chunks");
          if (args.mode === "table_rows" && !args.chunk_id && args.table === undefined)
            throw new ToolInputError("table: required for mode table_rows without chunk_id (or send chunk_id)");
          const chunkIds = args.mode === "chunks" ? (args.chunk_ids ?? []) : args.chunk_id ? [args.chunk_id] : [];
          const res = await call.ctx.documents.readDocument(
            {
              documentId: args.document_id,
              mode: READ_MODES[args.mode],
              headingsOnly: args.headings_only,
              fromChunkId: args.from_chunk_id ?? "",
              limit: args.limit,
              chunkIds,
              tableNumber: args.table ?? 0,
              rowOffset: args.row_offset,
              rowLimit: args.row_limit,
            },
            call.rpc(),
          );
          const head = { document_id: args.document_id, version_id: res.versionId, chunk_count: res.chunkCount };
          switch (args.mode) {
            case "outline":
              return {
                ...head,
                outline: res.outline.map((e) => ({
                  chunk_id: e.chunkId,
                  tag: e.tag,
                  level: e.level,
                  preview: e.preview,
                  ...(args.headings_only && { section_chunks: e.sectionChunks }),
                })),
                ...(res.nextFromChunkId && { next_from_chunk_id: res.nextFromChunkId }),
              };
            case "table_rows":
              return {
                ...head,
                table_chunk_id: res.tableChunkId,
                row_count: res.rowCount,
                row_offset: args.row_offset,
                rows: res.rows,
              };
            default:
              return {
                ...head,
                chunks: res.chunks.map((c) => ({ chunk_id: c.chunkId, html: c.html })),
                ...(res.leftOutChunkIds.length > 0 && { left_out_chunk_ids: res.leftOutChunkIds }),
                ...(res.unknownChunkIds.length > 0 && { unknown_chunk_ids: res.unknownChunkIds }),
              };
          }
        },
        { chunk_ids: args.mode === "chunks" ? "chunk_ids" : "chunk_id", table_number: "table" },
      ),
  );

  server.registerTool(
    "edit_document",
    {
      title: "Edit a document",
      description:
        "Runs one chat turn with a natural-language instruction on a document (the session's focused one, or " +
        "document_id) and returns the change records. approval_mode ask_every_time proposes the changes instead " +
        "(status awaiting_approval, job_id): decide them with approve_changes. Billed as a chat turn.",
      inputSchema: schemas.EditDocumentInput,
    },
    (args) =>
      run(call, async () => {
        const sessionId = await sessionFor(http, args.session_id, args.document_id);
        const body = {
          message: args.instruction,
          session_id: sessionId,
          ...(args.document_id && { document_id: args.document_id }),
          model_tier: args.model_tier,
          thinking_depth: args.thinking_depth,
          response_mode: "compact",
        };
        if (args.approval_mode === "approve_all") {
          const res = await http.call(ChatResponseSchema, "POST", "/v1/chat", { body });
          const changes = res.document_changes;
          return {
            session_id: res.session_id,
            response: res.response,
            ...(changes && {
              document_id: changes.document_id,
              version_id: changes.version_id,
              changes_summary: changes.changes_summary,
            }),
            changes: changes?.chunk_diffs ?? [],
            ops_charged: res.usage.ops_charged,
          };
        }
        const started = await http.call(AsyncChatResponseSchema, "POST", "/v1/chat/async", {
          body: { ...body, approval_mode: "ask_every_time" },
        });
        const job = await settledJob(http, started.job_id, tool.signal);
        const result = job.result && "document_changes" in job.result ? job.result : undefined;
        return {
          session_id: started.session_id,
          job_id: job.job_id,
          status: job.status,
          ...(job.status === "awaiting_approval" && { pending_changes: job.metadata.pending_changes ?? [] }),
          ...(result && { response: result.response, changes: result.document_changes?.chunk_diffs ?? [] }),
          ...(job.error && { error: job.error }),
        };
      }),
  );

  server.registerTool(
    "approve_changes",
    {
      title: "Approve or deny proposed changes",
      description:
        "Applies (approved true) or drops (false) changes an ask_every_time edit proposed: one (change_id), a " +
        "batch (changes), or every pending one. Applied changes are committed as one version.",
      inputSchema: schemas.ApproveChangesInput,
    },
    ({ session_id, ...body }) =>
      run(call, async () => {
        const res = await http.call(ApproveResponseSchema, "POST", `/v1/chat/${seg(session_id)}/approve`, { body });
        return {
          applied: res.applied,
          denied: res.denied,
          ...(res.version_id && { version_id: res.version_id }),
          job_status: res.job.status,
        };
      }),
  );

  server.registerTool(
    "save_document",
    {
      title: "Save a document's HTML",
      description:
        "Saves edited HTML (chunk ids kept) as a new version, merged at chunk level with other sessions' commits; " +
        "the same chunk changed since base_version_id is a conflict. Not billed, no AI turn.",
      inputSchema: schemas.SaveDocumentInput,
    },
    ({ session_id, document_id, ...body }) =>
      run(call, async () => {
        const res = await http.call(
          SaveResponseSchema,
          "POST",
          `/v1/sessions/${seg(session_id)}/documents/${seg(document_id)}/save`,
          { body },
        );
        const { html: _html, ...rest } = res;
        return rest;
      }),
  );

  server.registerTool(
    "list_versions",
    {
      title: "List versions",
      description: "A document's version history, newest first: what wrote each version, when, and how much changed.",
      inputSchema: schemas.ListVersionsInput,
      annotations: { readOnlyHint: true },
    },
    ({ document_id, ...query }) =>
      run(call, async () => {
        return await http.call(VersionListResponseSchema, "GET", `/v1/documents/${seg(document_id)}/versions`, {
          query,
        });
      }),
  );

  server.registerTool(
    "restore_version",
    {
      title: "Restore a version",
      description:
        "Writes a new version equal to an older one (history is never rewritten); nothing is written when head " +
        "already has that content (restored false).",
      inputSchema: schemas.RestoreVersionInput,
    },
    ({ document_id, version_id }) =>
      run(call, async () => {
        return await http.call(
          RestoreVersionResponseSchema,
          "POST",
          `/v1/documents/${seg(document_id)}/versions/${seg(version_id)}/restore`,
        );
      }),
  );

  server.registerTool(
    "export_document",
    {
      title: "Export a document",
      description:
        "Exports a document (docx, pdf, html, markdown, txt) and returns a download URL valid 15 minutes. Without " +
        "session_id the document is opened in a new session first (as open_document does).",
      inputSchema: schemas.ExportDocumentInput,
    },
    ({ session_id, document_id, ...rest }) =>
      run(call, async () => {
        const sessionId = await sessionFor(http, session_id, document_id);
        return await http.call(DownloadResponseSchema, "POST", "/v1/downloads", {
          body: { session_id: sessionId, ...(document_id && { document_id }), ...rest },
        });
      }),
  );
}

/** The tool names, in registration order (docs and tests). */
export const TOOL_NAMES = [
  "list_documents",
  "open_document",
  "read_document",
  "edit_document",
  "approve_changes",
  "save_document",
  "list_versions",
  "restore_version",
  "export_document",
] as const;
