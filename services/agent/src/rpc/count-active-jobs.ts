// JobsService.CountActiveJobs: the gateway's guard before a revert (unshown-parts.md, Revert).
import type { agentJobsV1 } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import { countActiveJobs as count } from "../commands/jobs.js";
import type { AgentContext } from "../context.js";

/** Jobs of the caller still open (pending, in_progress, awaiting_approval) on the session. */
export async function countActiveJobs(ctx: AgentContext, req: agentJobsV1.CountActiveJobsRequest, call: CallContext) {
  return { count: await count(ctx, requirePrincipal(call), req.sessionId) };
}
