import type { sessionsV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { getSession as get } from "../commands/sessions.js";
import { sessionMessage } from "../mappers.js";
import type { Rpc } from "./types.js";

/** GetSession: the caller's session with its open roster; NOT_FOUND for unknown or foreign ids. */
export const getSession: Rpc<sessionsV1.GetSessionRequest, sessionsV1.GetSessionResponse> = async (ctx, req, call) => {
  return { session: sessionMessage(await get(ctx.db, ownerOf(call), req.sessionId)) };
};
