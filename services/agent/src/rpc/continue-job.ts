// JobsService.ContinueJob: POST /v1/chat/{session_id}/continue (unshown-parts.md, Approval).
import type { agentJobsV1 } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import { continueJob as answer } from "../commands/approval.js";
import { jobWithEvents } from "../commands/jobs.js";
import type { AgentContext } from "../context.js";
import { jobToProto } from "../mappers.js";

/** Answers a continue prompt: back to pending, or completed with what was done (404, 409). */
export async function continueJob(ctx: AgentContext, req: agentJobsV1.ContinueJobRequest, call: CallContext) {
  const job = await jobWithEvents(ctx, await answer(ctx, requirePrincipal(call), req), false);
  return { job: jobToProto(job.row, job.events, false) };
}
