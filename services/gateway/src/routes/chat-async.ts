// POST /v1/chat/async and the decisions a job waits for (unshown-parts.md, Chat request and
// Approval): approve or deny proposed changes, answer a continue prompt.
import { InputError } from "@redline/service-kit";
import { jobToJson } from "../job-mappers.js";
import { toChatRpcRequest, usageHeaders, usageToJson } from "../mappers.js";
import { defineRoute } from "../route-registry.js";
import { ChatRequestSchema } from "../schemas.js";
import {
  ApproveRequestSchema,
  ApproveResponseSchema,
  AsyncChatResponseSchema,
  ChatSessionPathSchema,
  ContinueRequestSchema,
  JobSchema,
} from "../schemas-jobs.js";

/**
 * POST /v1/chat/async: holds one operation (429 when the quota is spent), creates the job and
 * answers 202 `{job_id, session_id, status: "pending", message, usage}` at once.
 */
export const chatAsyncRoute = defineRoute({
  method: "post",
  path: "/v1/chat/async",
  operationId: "chatAsync",
  summary: "Asynchronous AI edit (a job)",
  description:
    "Creates a chat job run by the agent's worker pool. Follow it with GET /v1/chat/{session_id}/stream?job_id=… " +
    "or poll GET /v1/jobs/{job_id}. With approval_mode=ask_every_time the job stops at awaiting_approval.",
  tags: ["chat"],
  auth: true,
  body: ChatRequestSchema,
  response: { status: 202, description: "The job, pending.", schema: AsyncChatResponseSchema },
  errors: [400, 403, 429, 503],
  async handle({ body }, call) {
    if (body.message.trim() === "") throw new InputError("message must not be empty");
    // Large uploads are held in the request; the agent only stores the job.
    const res = await call.ctx.jobs.createChatJob({ request: toChatRpcRequest(body) }, call.rpc(30_000));
    const usage = usageToJson(res.usage, call.principal?.plan ?? "");
    const job = res.job as NonNullable<typeof res.job>;
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
 * POST /v1/chat/{session_id}/approve: one change (`change_id`), every pending change (neither
 * `change_id` nor `changes`), or a batch (`changes`). Approved changes commit as one version;
 * denied ones are dropped and their feedback reaches the agent. 404 unknown job or change of
 * another session, 409 when the job does not await approval, 400 for an unknown change id.
 */
export const approveRoute = defineRoute({
  method: "post",
  path: "/v1/chat/{session_id}/approve",
  operationId: "approveChanges",
  summary: "Approve or deny proposed changes",
  tags: ["chat"],
  auth: true,
  params: ChatSessionPathSchema,
  body: ApproveRequestSchema,
  response: { description: "The decisions applied and the job after them.", schema: ApproveResponseSchema },
  errors: [400, 404, 409],
  async handle({ params, body }, call) {
    const decisions = body.changes
      ? body.changes.map((c) => ({ changeId: c.change_id, approved: c.approved, feedback: c.feedback ?? "" }))
      : [{ changeId: body.change_id ?? "", approved: body.approved, feedback: body.feedback ?? "" }];
    const res = await call.ctx.jobs.decideChanges(
      { sessionId: params.session_id, jobId: body.job_id, decisions },
      call.rpc(60_000),
    );
    return {
      body: {
        job: jobToJson(res.job as NonNullable<typeof res.job>, call.principal?.plan ?? "", true),
        applied: res.applied,
        denied: res.denied,
        version_id: res.versionId || null,
      },
    };
  },
});

/** POST /v1/chat/{session_id}/continue: answers a continue_prompt pause (409 otherwise). */
export const continueRoute = defineRoute({
  method: "post",
  path: "/v1/chat/{session_id}/continue",
  operationId: "continueJob",
  summary: "Continue (or finish) a paused long edit",
  tags: ["chat"],
  auth: true,
  params: ChatSessionPathSchema,
  body: ContinueRequestSchema,
  response: { description: "The job after the answer.", schema: JobSchema },
  errors: [404, 409],
  async handle({ params, body }, call) {
    const res = await call.ctx.jobs.continueJob(
      { sessionId: params.session_id, jobId: body.job_id, continue: body.continue },
      call.rpc(30_000),
    );
    return { body: jobToJson(res.job as NonNullable<typeof res.job>, call.principal?.plan ?? "", true) };
  },
});
