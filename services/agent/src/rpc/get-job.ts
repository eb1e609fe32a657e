// JobsService.GetJob: interface-spec endpoint 21, GET /v1/jobs/{job_id}.
import type { agentJobsV1 } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import { jobWithEvents, ownJob } from "../commands/jobs.js";
import type { AgentContext } from "../context.js";
import { jobToProto } from "../mappers.js";

/** The caller's job with its events unless `compact`; 404 when unknown, cleaned up or another owner's. */
export async function getJob(ctx: AgentContext, req: agentJobsV1.GetJobRequest, call: CallContext) {
  const job = await jobWithEvents(ctx, await ownJob(ctx, requirePrincipal(call), req.jobId), req.compact);
  return { job: jobToProto(job.row, job.events, req.compact) };
}
