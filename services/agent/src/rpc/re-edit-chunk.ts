// AgentService.ReEditChunk: interface-spec endpoint 18, POST /v1/sessions/{sid}/chunks/{chunk}/re-edit.
import { requirePrincipal } from "@redline/service-kit";
import { runReEdit } from "../commands/re-edit.js";
import type { AgentRpc } from "./call.js";

/**
 * Resolves a chunk's newest open conflict by `redo` (a new turn on the chunk) or `merge`, within
 * the call's deadline. InputError (400) for another mode; NotFoundError (404) without an open
 * conflict; QuotaExceededError (429) when no operation can be held (commands/re-edit.ts).
 */
export const reEditChunk: AgentRpc<"reEditChunk"> = async (ctx, req, call) => {
  const principal = requirePrincipal(call);
  return runReEdit(ctx, { principal, opts: call.forward(), log: call.log, deadline: call.deadline }, req);
};
