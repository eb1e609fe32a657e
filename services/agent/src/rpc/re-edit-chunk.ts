// AgentService.ReEditChunk: interface-spec endpoint 18, POST /v1/sessions/{sid}/chunks/{chunk}/re-edit.
import type { agentV1 } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import { runReEdit } from "../commands/re-edit.js";
import type { AgentContext } from "../context.js";

/** Resolves a chunk's newest open conflict, `redo` or `merge` (400 for another mode; 404, 429). */
export function reEditChunk(ctx: AgentContext, req: agentV1.ReEditChunkRequest, call: CallContext) {
  const principal = requirePrincipal(call);
  return runReEdit(ctx, { principal, opts: call.forward(), log: call.log, deadline: call.deadline }, req);
}
