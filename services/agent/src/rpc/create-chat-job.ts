// JobsService.CreateChatJob: POST /v1/chat/async (unshown-parts.md, Jobs).
import type { agentJobsV1 } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import { createChatJob as create } from "../commands/jobs.js";
import type { AgentContext } from "../context.js";
import { jobToProto } from "../mappers.js";

/** Creates a pending chat job holding 1 operation; the compact job and the usage (400, 403, 415, 429). */
export async function createChatJob(
  ctx: AgentContext,
  req: agentJobsV1.CreateChatJobRequest,
  call: CallContext,
): Promise<agentJobsV1.CreateChatJobResponse> {
  const { row, usage } = await create(ctx, requirePrincipal(call), call.forward(), req.request);
  return { job: jobToProto(row, [], true), usage };
}
