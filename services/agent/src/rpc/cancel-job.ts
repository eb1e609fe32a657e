// JobsService.CancelJob: POST /v1/jobs/{job_id}/cancel (unshown-parts.md, Jobs).
import type { agentJobsV1 } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import { cancelJob as cancel, jobWithEvents } from "../commands/jobs.js";
import type { AgentContext } from "../context.js";
import { jobToProto } from "../mappers.js";

/** Cancels the caller's job: `stopped_here` or `accepted` (404; 409 for a terminal or busy job). */
export async function cancelJob(ctx: AgentContext, req: agentJobsV1.CancelJobRequest, call: CallContext) {
  const { row, stopState } = await cancel(ctx, requirePrincipal(call), req.jobId);
  const job = await jobWithEvents(ctx, row, false);
  return { job: jobToProto(job.row, job.events, false), stopState };
}
