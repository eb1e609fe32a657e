// JobsService.DecideChanges: POST /v1/chat/{session_id}/approve (unshown-parts.md, Approval).
import { requirePrincipal } from "@redline/service-kit";
import { decideChanges as decide } from "../commands/approval.js";
import { jobWithEvents } from "../commands/jobs.js";
import { jobToProto } from "../mappers.js";
import type { JobsRpc } from "./call.js";

/**
 * Approves or denies the staged changes of a job awaiting approval: the job with its events and
 * what was applied or discarded. InputError (400), NotFoundError (404), ConflictError (409) as
 * commands/approval.ts lists them.
 */
export const decideChanges: JobsRpc<"decideChanges"> = async (ctx, req, call) => {
  const { row, ...decided } = await decide(ctx, requirePrincipal(call), req, call.trace);
  const job = await jobWithEvents(ctx, row, false);
  return { job: jobToProto(job.row, job.events, false), ...decided };
};
