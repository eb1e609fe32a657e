// JobsService.ListJobs: interface-spec endpoints 20 and 22 (GET /v1/sessions/{sid}/jobs, GET /v1/jobs).
import type { agentJobsV1 } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import { listOwnJobs } from "../commands/jobs.js";
import type { AgentContext } from "../context.js";
import { jobToProto } from "../mappers.js";

/** The caller's jobs, most recent first, optionally of one status or session; `limit` 1..200. */
export async function listJobs(ctx: AgentContext, req: agentJobsV1.ListJobsRequest, call: CallContext) {
  const { rows, events } = await listOwnJobs(ctx, requirePrincipal(call), req);
  return { jobs: rows.map((r) => jobToProto(r, events.get(r.id) ?? [], req.compact)) };
}
