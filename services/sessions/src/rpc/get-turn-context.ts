import type { sessionsV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { getTurnContext as read } from "../commands/sessions.js";
import { chatMessage, sessionMessage } from "../mappers.js";
import type { Rpc } from "./types.js";

/** GetTurnContext: what a chat turn reads first (session ensured, recent history, memory note), one statement. */
export const getTurnContext: Rpc<sessionsV1.GetTurnContextRequest, sessionsV1.GetTurnContextResponse> = async (
  ctx,
  req,
  call,
) => {
  const turn = await read(ctx.db, ownerOf(call), req);
  const { created, memoryNote } = turn;
  return { session: sessionMessage(turn.view), created, messages: turn.messages.map(chatMessage), memoryNote };
};
