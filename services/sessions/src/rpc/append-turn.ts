import type { sessionsV1 } from "@redline/grpc-stubs";
import { ownerOf } from "@redline/service-kit";
import { appendTurn as append } from "../commands/turns.js";
import type { Rpc } from "./types.js";

/** AppendTurn: records a chat turn (both messages, roster, memory note) and returns its index. */
export const appendTurn: Rpc<sessionsV1.AppendTurnRequest, sessionsV1.AppendTurnResponse> = async (ctx, req, call) => {
  return { turnIndex: await append(ctx.db, ownerOf(call), req) };
};
