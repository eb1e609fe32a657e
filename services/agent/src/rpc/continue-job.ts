// JobsService.ContinueJob: POST /v1/chat/{session_id}/continue (unshown-parts.md, Approval).
import { requirePrincipal } from "@redline/service-kit";
import { continueJob as answer } from "../commands/approval.js";
import { jobWithEvents } from "../commands/jobs.js";
import { jobToProto } from "../mappers.js";
import type { JobsRpc } from "./call.js";

/**
 * Answers a job's continue prompt: the job, back to pending (continue) or completed with what was
 * done (stop), with its events. NotFoundError (404) for an unknown or foreign job; ConflictError
 * (409) when the job is not awaiting a continue answer.
 */
export const continueJob: JobsRpc<"continueJob"> = async (ctx, req, call) => {
  const job = await jobWithEvents(ctx, await answer(ctx, requirePrincipal(call), req), false);
  return { job: jobToProto(job.row, job.events, false) };
};
