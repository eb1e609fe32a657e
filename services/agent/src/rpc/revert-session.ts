// RevertService.RevertSession: POST /v1/sessions/{session_id}/revert (unshown-parts.md, Revert).
import type { agentRevertV1 } from "@redline/grpc-stubs";
import { type CallContext, requirePrincipal } from "@redline/service-kit";
import { revertSession as revert } from "../commands/revert.js";
import type { AgentContext } from "../context.js";

/** Rewinds the session to before turn `turn_index` (400, 404, 409, 422: commands/revert.ts). */
export function revertSession(ctx: AgentContext, req: agentRevertV1.RevertSessionRequest, call: CallContext) {
  return revert(ctx, requirePrincipal(call), call.forward({ timeoutMs: 60_000 }), req);
}
