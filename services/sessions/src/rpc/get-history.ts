import type { sessionsV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { getHistory as history } from "../commands/sessions.js";
import { chatMessage, sessionMessage } from "../mappers.js";
import type { Rpc } from "./types.js";

/** GetHistory: the session and its active messages in order (interface-spec.md, history endpoint). */
export const getHistory: Rpc<sessionsV1.GetHistoryRequest, sessionsV1.GetHistoryResponse> = async (ctx, req, call) => {
  const { view, messages } = await history(ctx.db, ownerOf(call), req.sessionId);
  return { session: sessionMessage(view), messages: messages.map(chatMessage) };
};
