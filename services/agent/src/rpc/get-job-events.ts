// JobsService.GetJobEvents: the replay of a job's progress stream (unshown-parts.md, Progress stream).
import { requirePrincipal } from "@redline/service-kit";
import { jobEventsAfter } from "../commands/jobs.js";
import { jobToProto } from "../mappers.js";
import type { JobsRpc } from "./call.js";

/**
 * The job's stored events with a sequence above `after_sequence`, oldest first, with the job's
 * status, session and response mode. NotFoundError (404) for an unknown or foreign job.
 */
export const getJobEvents: JobsRpc<"getJobEvents"> = async (ctx, req, call) => {
  const { row, events } = await jobEventsAfter(ctx, requirePrincipal(call), req.jobId, req.afterSequence);
  const job = jobToProto(row, events, false);
  return { events: job.events, status: row.status, sessionId: row.session_id, responseMode: job.responseMode };
};
