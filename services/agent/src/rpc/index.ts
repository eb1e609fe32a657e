// The agent's gRPC handlers: each RPC of agent.proto, jobs.proto and revert.proto bound to its file.
import { agentJobsV1, agentRevertV1, agentV1 } from "@redline/grpc-stubs";
import { bindService } from "@redline/service-kit";
import type { AgentContext } from "../context.js";
import { cancelJob } from "./cancel-job.js";
import { chat } from "./chat.js";
import { continueJob } from "./continue-job.js";
import { countActiveJobs } from "./count-active-jobs.js";
import { createChatJob } from "./create-chat-job.js";
import { decideChanges } from "./decide-changes.js";
import { getJob } from "./get-job.js";
import { getJobEvents } from "./get-job-events.js";
import { listJobs } from "./list-jobs.js";
import { reEditChunk } from "./re-edit-chunk.js";
import { redoRevert } from "./redo-revert.js";
import { revertSession } from "./revert-session.js";

/** Handlers of agent.v1.AgentService, JobsService and RevertService. */
export function agentHandlers(ctx: AgentContext) {
  return [
    bindService(agentV1.AgentServiceService, {
      chat: (req, call) => chat(ctx, call, req),
      reEditChunk: (req, call) => reEditChunk(ctx, call, req),
    }),
    bindService(agentJobsV1.JobsServiceService, {
      createChatJob: (req, call) => createChatJob(ctx, call, req),
      getJob: (req, call) => getJob(ctx, call, req),
      listJobs: (req, call) => listJobs(ctx, call, req),
      cancelJob: (req, call) => cancelJob(ctx, call, req),
      getJobEvents: (req, call) => getJobEvents(ctx, call, req),
      decideChanges: (req, call) => decideChanges(ctx, call, req),
      continueJob: (req, call) => continueJob(ctx, call, req),
      countActiveJobs: (req, call) => countActiveJobs(ctx, call, req),
    }),
    bindService(agentRevertV1.RevertServiceService, {
      revertSession: (req, call) => revertSession(ctx, call, req),
      redoRevert: (req, call) => redoRevert(ctx, call, req),
    }),
  ];
}
