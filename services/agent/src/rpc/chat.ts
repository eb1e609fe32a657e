// AgentService.Chat: interface-spec endpoint 1, POST /v1/chat.
import { InputError, requirePrincipal } from "@redline/service-kit";
import { runChatTurn } from "../commands/chat.js";
import type { AgentRpc } from "./call.js";

/**
 * One synchronous chat turn for the caller, within the call's deadline: the reply, the changes
 * and the usage. InputError (400) for an empty message; the turn's own errors (403, 404, 409,
 * 429...) are listed in commands/chat.ts.
 */
export const chat: AgentRpc<"chat"> = async (ctx, req, call) => {
  const principal = requirePrincipal(call);
  if (!req.message.trim()) throw new InputError("message must not be empty");
  return runChatTurn(ctx, { principal, opts: call.forward(), log: call.log, deadline: call.deadline }, req);
};
