// JobsService.GetJob: interface-spec endpoint 21, GET /v1/jobs/{job_id}.
import { requirePrincipal } from "@redline/service-kit";
import { jobWithEvents, ownJob } from "../commands/jobs.js";
import { jobToProto } from "../mappers.js";
import type { JobsRpc } from "./call.js";

/**
 * The caller's job, with its events unless `compact`. NotFoundError (404) when the job is
 * unknown, cleaned up or another owner's.
 */
export const getJob: JobsRpc<"getJob"> = async (ctx, req, call) => {
  const job = await jobWithEvents(ctx, await ownJob(ctx, requirePrincipal(call), req.jobId), req.compact);
  return { job: jobToProto(job.row, job.events, req.compact) };
};
