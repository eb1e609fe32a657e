import type { sessionsWorkspaceV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { resolveDocument as resolve } from "../commands/roster.js";
import { rosterEntry } from "../mappers.js";
import type { Rpc } from "./types.js";

/** ResolveDocument: the slot a slot id or durable id names; NOT_FOUND when the session does not hold it. */
export const resolveDocument: Rpc<
  sessionsWorkspaceV1.ResolveDocumentRequest,
  sessionsWorkspaceV1.ResolveDocumentResponse
> = async (ctx, req, call) => {
  return { entry: rosterEntry(await resolve(ctx.db, ownerOf(call), req)) };
};
