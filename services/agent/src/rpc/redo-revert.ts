// RevertService.RedoRevert: undoing a revert (unshown-parts.md, Revert).
import { requirePrincipal } from "@redline/service-kit";
import { redoRevert as redo } from "../commands/revert.js";
import type { RevertRpc } from "./call.js";

/**
 * Undoes a revert by its redo checkpoint id, with 60 s for the calls it forwards. InputError
 * (400), NotFoundError (404), ConflictError (409) as commands/revert.ts lists them.
 */
export const redoRevert: RevertRpc<"redoRevert"> = async (ctx, req, call) => {
  return redo(ctx, requirePrincipal(call), call.forward({ timeoutMs: 60_000 }), req);
};
