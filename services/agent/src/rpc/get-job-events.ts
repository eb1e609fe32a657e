// JobsService.GetJobEvents: the replay of a job's progress stream (unshown-parts.md, Progress stream).
import type { agentJobsV1 } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import { jobEventsAfter } from "../commands/jobs.js";
import type { AgentContext } from "../context.js";
import { jobToProto } from "../mappers.js";

/** Stored events after `after_sequence`, with the job's status, session and response mode (404). */
export async function getJobEvents(ctx: AgentContext, req: agentJobsV1.GetJobEventsRequest, call: CallContext) {
  const { row, events } = await jobEventsAfter(ctx, requirePrincipal(call), req.jobId, req.afterSequence);
  const job = jobToProto(row, events, false);
  return { events: job.events, status: row.status, sessionId: row.session_id, responseMode: job.responseMode };
}
