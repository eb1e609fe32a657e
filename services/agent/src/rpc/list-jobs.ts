// JobsService.ListJobs: interface-spec endpoints 20 and 22 (GET /v1/sessions/{sid}/jobs, GET /v1/jobs).
import { requirePrincipal } from "@redline/service-kit";
import { listOwnJobs } from "../commands/jobs.js";
import { jobToProto } from "../mappers.js";
import type { JobsRpc } from "./call.js";

/**
 * The caller's jobs, most recent first, optionally of one status or one session; `limit` 1..200,
 * each with its events unless `compact`.
 */
export const listJobs: JobsRpc<"listJobs"> = async (ctx, req, call) => {
  const { rows, events } = await listOwnJobs(ctx, requirePrincipal(call), req);
  return { jobs: rows.map((r) => jobToProto(r, events.get(r.id) ?? [], req.compact)) };
};
