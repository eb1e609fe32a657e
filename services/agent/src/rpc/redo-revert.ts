// RevertService.RedoRevert: undoing a revert (unshown-parts.md, Revert).
import type { agentRevertV1 } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import { redoRevert as redo } from "../commands/revert.js";
import type { AgentContext } from "../context.js";

/** Undoes a revert by its redo checkpoint id (400, 404, 409: commands/revert.ts). */
export function redoRevert(ctx: AgentContext, req: agentRevertV1.RedoRevertRequest, call: CallContext) {
  return redo(ctx, requirePrincipal(call), call.forward({ timeoutMs: 60_000 }), req);
}
