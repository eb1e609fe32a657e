// The job routes: get, list (all or a session's), cancel, and the decisions a job waits for
// (approve / deny proposed changes, answer a continue prompt).
import type { agentJobsV1, ingestFilesV1 } from "@redline/grpc-stubs";
import { required } from "@redline/service-kit";
import { defineRoute, type Route, type RouteCall } from "../../route-registry.js";
import { answers, EXPENSIVE, endpoint } from "../shared/routes.js";
import { SessionPathSchema } from "../shared/schemas.js";
import { attachmentJobToJson, jobToJson, newestJobs } from "./mappers.js";
import * as schemas from "./schemas.js";
import { streamRoute } from "./stream.js";

/**
 * POST /v1/chat/{session_id}/approve: one change (`change_id`), every pending change (neither
 * `change_id` nor `changes`), or a batch (`changes`). Approved changes commit as one version;
 * denied ones are dropped and their feedback reaches the agent. 404 unknown job or change of
 * another session, 409 when the job does not await approval, 400 for an unknown change id.
 */
export const approveRoute = defineRoute({
  ...endpoint("POST /v1/chat/{session_id}/approve", "approveChanges", "Approve or deny proposed changes", "chat"),
  request: { params: SessionPathSchema, body: schemas.ApproveRequestSchema },
  ...answers(schemas.ApproveResponseSchema, "The decisions applied and the job after them.", [400, 404, 409]),
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
        job: jobToJson(required(res.job, "job"), call.principal?.plan ?? "", true),
        applied: res.applied,
        denied: res.denied,
        version_id: res.versionId || undefined,
      },
    };
  },
});

/** POST /v1/chat/{session_id}/continue: answers a continue_prompt pause (409 otherwise). */
export const continueRoute = defineRoute({
  ...endpoint(
    "POST /v1/chat/{session_id}/continue",
    "continueJob",
    "Continue (or finish) a paused long edit",
    "chat",
    EXPENSIVE,
  ),
  request: { params: SessionPathSchema, body: schemas.ContinueRequestSchema },
  ...answers(schemas.JobSchema, "The job after the answer.", [404, 409]),
  async handle({ params, body }, call) {
    const res = await call.ctx.jobs.continueJob(
      { sessionId: params.session_id, jobId: body.job_id, continue: body.continue },
      call.rpc(30_000),
    );
    return { body: jobToJson(required(res.job, "job"), call.principal?.plan ?? "", true) };
  },
});

/** GET /v1/jobs/{job_id} (endpoint 21): 404 when unknown, another owner's or cleaned up. */
export const getJobRoute = defineRoute({
  ...endpoint("GET /v1/jobs/{job_id}", "getJob", "Get one job", "jobs"),
  description: "Jobs are removed 1 hour after they complete; then 404.",
  request: { params: schemas.JobPathSchema, query: schemas.GetJobQuerySchema },
  ...answers(schemas.JobSchema, "The job.", [404]),
  async handle({ params, query }, call) {
    // Attachment processing jobs live with their attachments in ingest (att_ ids).
    if (params.job_id.startsWith("att_")) {
      const res = await call.ctx.files.getAttachmentJob({ attachmentId: params.job_id }, call.rpc());
      return { body: attachmentJobToJson(required(res.job, "job"), call.principal) };
    }
    const res = await call.ctx.jobs.getJob({ jobId: params.job_id, compact: query.compact }, call.rpc());
    return { body: jobToJson(required(res.job, "job"), call.principal?.plan ?? "", query.compact) };
  },
});

/** `{jobs, total}` of chat and attachment jobs: newest first by created_at, the first `limit` of both kinds together. */
function jobList(
  call: RouteCall,
  chat: agentJobsV1.Job[],
  attachments: ingestFilesV1.AttachmentJob[],
  page: { limit: number; compact: boolean },
) {
  const jobs = newestJobs(
    [
      ...chat.map((j) => jobToJson(j, call.principal?.plan ?? "", page.compact)),
      ...attachments.map((a) => attachmentJobToJson(a, call.principal)),
    ],
    page.limit,
  );
  return { jobs, total: jobs.length };
}

/**
 * GET /v1/jobs (endpoint 22): the caller's chat jobs (agent) and attachment_processing jobs
 * (ingest) in one list, newest first by created_at, the first `limit` of both together; `status`
 * filters both kinds by the spec's job status (an attachment's processing is in_progress).
 */
export const listJobsRoute = defineRoute({
  ...endpoint("GET /v1/jobs", "listJobs", "List jobs", "jobs"),
  description:
    "Chat jobs and attachment_processing jobs of the caller's owner scope, newest first. `status` takes any " +
    "string: a job status filters both kinds, any other value lists none.",
  request: { query: schemas.ListJobsQuerySchema },
  ...answers(schemas.JobListSchema, "The caller's jobs, most recent first.", [503]),
  async handle({ query }, call) {
    // A status outside the spec's vocabulary matches no job: an empty list, not a 422 (#11).
    if (query.status && !(schemas.JOB_STATUSES as readonly string[]).includes(query.status)) {
      return { body: { jobs: [], total: 0 } };
    }
    const status = query.status ?? "";
    // Each kind's newest `limit` hold the newest `limit` of both.
    const [chat, attachments] = await Promise.all([
      call.ctx.jobs.listJobs({ status, sessionId: "", limit: query.limit, compact: query.compact }, call.rpc()),
      call.ctx.files.listAttachmentJobs({ status, sessionId: "", limit: query.limit }, call.rpc()),
    ]);
    return { body: jobList(call, chat.jobs, attachments.jobs, query) };
  },
});

/** GET /v1/sessions/{session_id}/jobs (endpoint 20); 404 for an unknown or another owner's session. */
export const sessionJobsRoute = defineRoute({
  ...endpoint("GET /v1/sessions/{session_id}/jobs", "listSessionJobs", "List jobs of a session", "jobs"),
  request: { params: SessionPathSchema, query: schemas.SessionJobsQuerySchema },
  ...answers(schemas.JobListSchema, "The session's jobs, most recent first.", [404]),
  async handle({ params, query }, call) {
    // An unknown or foreign session is 404, like the session's other routes.
    const [, chat, attachments] = await Promise.all([
      call.ctx.sessions.getSession({ sessionId: params.session_id }, call.rpc()),
      call.ctx.jobs.listJobs(
        { status: "", sessionId: params.session_id, limit: query.limit, compact: query.compact },
        call.rpc(),
      ),
      call.ctx.files.listAttachmentJobs({ status: "", sessionId: params.session_id, limit: query.limit }, call.rpc()),
    ]);
    return { body: jobList(call, chat.jobs, attachments.jobs, query) };
  },
});

/**
 * POST /v1/jobs/{job_id}/cancel: the job plus stop_state; applied changes stay, staged ones are
 * discarded; 409 naming the status for a terminal job; 404 for an unknown one.
 */
export const cancelJobRoute = defineRoute({
  ...endpoint("POST /v1/jobs/{job_id}/cancel", "cancelJob", "Cancel a job", "jobs"),
  request: { params: schemas.JobPathSchema },
  ...answers(schemas.CancelJobResponseSchema, "The job after the cancel, with stop_state.", [404, 409]),
  async handle({ params }, call) {
    // A cancel of a job running here waits for the worker to let go (at most ~10 s).
    const res = await call.ctx.jobs.cancelJob({ jobId: params.job_id }, call.rpc(20_000));
    const job = jobToJson(required(res.job, "job"), call.principal?.plan ?? "", false);
    return {
      body: { ...job, stop_state: res.stopState === "accepted" ? ("accepted" as const) : ("stopped_here" as const) },
    };
  },
});

/** The jobs routes, in documentation order (api/index.ts mounts every area's list). */
export const jobsRoutes: Route[] = [
  approveRoute,
  continueRoute,
  streamRoute,
  getJobRoute,
  listJobsRoute,
  sessionJobsRoute,
  cancelJobRoute,
];
