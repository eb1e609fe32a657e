// JobsService.CountActiveJobs: the gateway's guard before a revert (unshown-parts.md, Revert).
import { requirePrincipal } from "@redline/service-kit";
import { countActiveJobs as count } from "../commands/jobs.js";
import type { JobsRpc } from "./call.js";

/** How many of the caller's jobs on the session are still open (pending, in_progress, awaiting_approval). */
export const countActiveJobs: JobsRpc<"countActiveJobs"> = async (ctx, req, call) => {
  return { count: await count(ctx, requirePrincipal(call), req.sessionId) };
};
