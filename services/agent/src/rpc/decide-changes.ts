// JobsService.DecideChanges: POST /v1/chat/{session_id}/approve (unshown-parts.md, Approval).
import type { agentJobsV1 } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import { decideChanges as decide } from "../commands/approval.js";
import { jobWithEvents } from "../commands/jobs.js";
import type { AgentContext } from "../context.js";
import { jobToProto } from "../mappers.js";

/** Approves or denies staged changes of a job awaiting approval (400, 404, 409: commands/approval.ts). */
export async function decideChanges(ctx: AgentContext, req: agentJobsV1.DecideChangesRequest, call: CallContext) {
  const { row, ...decided } = await decide(ctx, requirePrincipal(call), req, call.trace);
  const job = await jobWithEvents(ctx, row, false);
  return { job: jobToProto(job.row, job.events, false), ...decided };
}
