// JobsService.CreateChatJob: POST /v1/chat/async (unshown-parts.md, Jobs).
import { requirePrincipal } from "@redline/service-kit";
import { createChatJob as create } from "../commands/jobs.js";
import { jobToProto } from "../mappers.js";
import type { JobsRpc } from "./call.js";

/**
 * Creates a pending chat job holding 1 operation: the compact job and the caller's usage.
 * InputError (400) for an empty message, ForbiddenError (403) for another owner's session id,
 * 415 for an upload ingest does not convert, QuotaExceededError (429) when the quota is spent.
 */
export const createChatJob: JobsRpc<"createChatJob"> = async (ctx, req, call) => {
  const { row, usage } = await create(ctx, requirePrincipal(call), call.forward(), req.request);
  return { job: jobToProto(row, [], true), usage };
};
