// JobsService.CancelJob: POST /v1/jobs/{job_id}/cancel (unshown-parts.md, Jobs).
import { requirePrincipal } from "@redline/service-kit";
import { cancelJob as cancel, jobWithEvents } from "../commands/jobs.js";
import { jobToProto } from "../mappers.js";
import type { JobsRpc } from "./call.js";

/**
 * Cancels the caller's job: the job with its events and `stopState` (`stopped_here` when it
 * stopped on this instance, `accepted` when another instance's worker will notice the flag).
 * NotFoundError (404) for an unknown or foreign job; ConflictError (409) for a terminal or busy one.
 */
export const cancelJob: JobsRpc<"cancelJob"> = async (ctx, req, call) => {
  const { row, stopState } = await cancel(ctx, requirePrincipal(call), req.jobId);
  const job = await jobWithEvents(ctx, row, false);
  return { job: jobToProto(job.row, job.events, false), stopState };
};
