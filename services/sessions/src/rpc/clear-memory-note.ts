import type { sessionsWorkspaceV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { clearMemoryNote as clear } from "../commands/memory.js";
import type { Rpc } from "./types.js";

/** ClearMemoryNote (endpoint 4): deletes one memory note; idempotent. */
export const clearMemoryNote: Rpc<
  sessionsWorkspaceV1.ClearMemoryNoteRequest,
  sessionsWorkspaceV1.ClearMemoryNoteResponse
> = async (ctx, req, call) => {
  return { removed: await clear(ctx.db, ownerOf(call), req.memoryKey) };
};
