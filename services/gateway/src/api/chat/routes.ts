// The chat routes: POST /v1/chat (synchronous turn), POST /v1/chat/async (a job; follow it in
// api/jobs) and the session revert / redo-revert.
import { status as GrpcStatus } from "@grpc/grpc-js";
import type { agentRevertV1, agentV1 } from "@redline/grpc-stubs";
import { AiTimeoutError, InputError, RedlineError, RemoteError, required } from "@redline/service-kit";
import { CHAT_DEADLINE_GRACE_MS } from "../../config.js";
import { defineRoute, type Route, type RouteCall } from "../../route-registry.js";
import { attachmentToJson } from "../attachments/mappers.js";
import { AsyncChatResponseSchema } from "../jobs/schemas.js";
import { USAGE_HEADER_DOCS, usageHeaders, usageToJson, withUsageHeaders } from "../shared/mappers.js";
import { answers, EXPENSIVE_IDEMPOTENT, endpoint } from "../shared/routes.js";
import { SessionPathSchema } from "../shared/schemas.js";
import { chatResponseToJson, revertToJson, toChatRpcRequest } from "./mappers.js";
import * as schemas from "./schemas.js";

// A pre-signed upload may be 100 MB: reading it back outlasts the default deadline.
const UPLOAD_READ_TIMEOUT_MS = 60_000;

/**
 * The agent's ChatRequest of a chat body; a pre-signed `upload_id` is read from ingest and sent
 * as the upload, exactly as `upload_document_base64` is (404 unknown, expired or never PUT; 400
 * with both, or for an upload of another purpose).
 */
async function chatRpcRequest(call: RouteCall, body: schemas.ChatRequestBody): Promise<agentV1.ChatRequest> {
  const request = toChatRpcRequest(body);
  if (!body.upload_id) return request;
  if (body.upload_document_base64) throw new InputError("Send upload_document_base64 or upload_id, not both");
  const upload = await call.ctx.files.readUpload({ uploadId: body.upload_id }, call.rpc(UPLOAD_READ_TIMEOUT_MS));
  if (upload.purpose !== "document") {
    throw new InputError(`Upload ${body.upload_id} has purpose ${upload.purpose}; a chat loads a document upload`);
  }
  return { ...request, upload: { filename: upload.filename, content: upload.content } };
}

/** The synchronous chat route. Errors: 400 empty message, 429 quota, 504 past the AI cap, agent errors as sent. */
export const chatRoute = defineRoute({
  ...endpoint("POST /v1/chat", "chat", "Synchronous AI edit", "chat", EXPENSIVE_IDEMPOTENT),
  description:
    "Runs one chat turn. The document is loaded or replaced only when document_html, upload_document_base64 or " +
    "upload_id is sent. " +
    "One billable operation per document-modifying turn (one more per 25 sections changed).",
  request: { body: schemas.ChatRequestSchema },
  response: {
    description: "The AI's reply, the document changes and the usage after the turn.",
    schema: schemas.ChatResponseSchema,
    headers: USAGE_HEADER_DOCS,
  },
  errors: [400, 404, 415, 429, 503, 504],
  async handle({ body }, call) {
    if (body.message.trim() === "") throw new InputError("message must not be empty");
    const { aiTimeoutMs } = call.ctx.cfg;
    const request = await chatRpcRequest(call, body);
    let res: Awaited<ReturnType<typeof call.ctx.agent.chat>>;
    try {
      res = await call.ctx.agent.chat(request, call.rpc(aiTimeoutMs + CHAT_DEADLINE_GRACE_MS));
    } catch (err) {
      // Our own deadline passed (the agent did not answer its 504 in time): Errors rule 3.
      if (
        err instanceof RedlineError &&
        !(err instanceof RemoteError) &&
        err.grpcCode === GrpcStatus.DEADLINE_EXCEEDED
      ) {
        throw new AiTimeoutError(`AI processing exceeded the ${Math.round(aiTimeoutMs / 60_000)}-minute limit`);
      }
      throw err;
    }
    const json = chatResponseToJson(res, body.response_mode, call.principal?.plan ?? "");
    return { body: json, headers: usageHeaders(json.usage) };
  },
});

/**
 * POST /v1/chat/async: holds one operation (429 when the quota is spent), creates the job and
 * answers 202 `{job_id, session_id, status: "pending", message, usage}` at once.
 */
export const chatAsyncRoute = defineRoute({
  ...endpoint("POST /v1/chat/async", "chatAsync", "Asynchronous AI edit (a job)", "chat", EXPENSIVE_IDEMPOTENT),
  description:
    "Creates a chat job run by the agent's worker pool. Follow it with GET /v1/chat/{session_id}/stream?job_id=… " +
    "or poll GET /v1/jobs/{job_id}. With approval_mode=ask_every_time the job stops at awaiting_approval.",
  request: { body: schemas.ChatRequestSchema },
  ...withUsageHeaders(
    answers(AsyncChatResponseSchema, { status: 202, description: "The job, pending." }, [400, 403, 404, 429, 503]),
  ),
  async handle({ body }, call) {
    if (body.message.trim() === "") throw new InputError("message must not be empty");
    // Large uploads are held in the request; the agent only stores the job.
    const request = await chatRpcRequest(call, body);
    const res = await call.ctx.jobs.createChatJob({ request }, call.rpc(30_000));
    const usage = usageToJson(res.usage, call.principal?.plan ?? "");
    const job = required(res.job, "job");
    return {
      status: 202,
      body: {
        job_id: job.jobId,
        session_id: job.sessionId,
        status: "pending" as const,
        message: "Job created; follow it on the progress stream or poll GET /v1/jobs/{job_id}.",
        usage,
      },
      headers: usageHeaders(usage),
    };
  },
});

/**
 * Revert: turns from turn_index on leave the active history and every document returns to its
 * state before that turn as a new version. 409 while a job runs or awaits approval, 404 for a
 * turn not in the active history, 422 for a turn without a restore point.
 */
export const revertRoute = defineRoute({
  ...endpoint("POST /v1/sessions/{session_id}/revert", "revertSession", "Rewind a session to a turn", "sessions"),
  request: { params: SessionPathSchema, body: schemas.RevertRequestSchema },
  ...answers(schemas.RevertResponseSchema, "The state after the revert and the redo token.", [404, 409]),
  async handle({ params, body }, call) {
    const res = await call.ctx.revert.revertSession(
      { sessionId: params.session_id, turnIndex: body.turn_index, dryRun: body.dry_run },
      call.rpc(90_000),
    );
    return { body: revertToJson(res, await sessionAttachments(call, res)) };
  },
});

/**
 * The session's attachments for a revert answer's document_state (upload order, as the history
 * lists them); none to fetch when there is no document state.
 */
async function sessionAttachments(call: RouteCall, res: agentRevertV1.RevertSessionResponse) {
  if (!res.documentState) return [];
  const files = await call.ctx.files.listAttachments({ sessionId: res.sessionId }, call.rpc());
  return files.attachments.map(attachmentToJson);
}

/** Redo-revert: undoes a revert (409 when undone already, superseded by new turns, or a job is open). */
export const redoRevertRoute = defineRoute({
  ...endpoint("POST /v1/sessions/{session_id}/redo-revert", "redoRevert", "Undo a revert", "sessions"),
  request: { params: SessionPathSchema, body: schemas.RedoRevertRequestSchema },
  ...answers(schemas.RevertResponseSchema, "The state after the redo.", [400, 404, 409]),
  async handle({ params, body }, call) {
    const res = await call.ctx.revert.redoRevert(
      { sessionId: params.session_id, turnIndex: body.turn_index, redoCheckpointId: body.redo_checkpoint_id },
      call.rpc(90_000),
    );
    return { body: revertToJson(res, await sessionAttachments(call, res)) };
  },
});

/** The chat routes, in documentation order (api/index.ts mounts every area's list). */
export const chatRoutes: Route[] = [chatRoute, chatAsyncRoute, revertRoute, redoRevertRoute];
