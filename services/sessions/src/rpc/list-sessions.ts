import type { sessionsV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { listSessions as list } from "../commands/sessions.js";
import { sessionMessage } from "../mappers.js";
import type { Rpc } from "./types.js";

/** ListSessions: the caller's sessions, most recent first, at most `limit` (1..200, larger clamped) after `offset`. */
export const listSessions: Rpc<sessionsV1.ListSessionsRequest, sessionsV1.ListSessionsResponse> = async (
  ctx,
  req,
  call,
) => {
  return { sessions: (await list(ctx.db, ownerOf(call), req)).map(sessionMessage) };
};
