// RevertService.RevertSession: POST /v1/sessions/{session_id}/revert (unshown-parts.md, Revert).
import { requirePrincipal } from "@redline/service-kit";
import { revertSession as revert } from "../commands/revert.js";
import type { RevertRpc } from "./call.js";

/**
 * Rewinds the session to before turn `turn_index`, with 60 s for the calls it forwards.
 * InputError (400), NotFoundError (404), ConflictError (409) and 422 as commands/revert.ts lists them.
 */
export const revertSession: RevertRpc<"revertSession"> = async (ctx, req, call) => {
  return revert(ctx, requirePrincipal(call), call.forward({ timeoutMs: 60_000 }), req);
};
