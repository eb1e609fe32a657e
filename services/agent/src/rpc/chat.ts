// AgentService.Chat: interface-spec endpoint 1, POST /v1/chat.
import type { agentV1 } from "@redline/grpc-stubs";
import { type CallContext, InputError, requirePrincipal } from "@redline/service-kit";
import { runChatTurn } from "../commands/chat.js";
import type { AgentContext } from "../context.js";

/** One synchronous chat turn for the caller; 400 for an empty message (errors: commands/chat.ts). */
export function chat(ctx: AgentContext, req: agentV1.ChatRequest, call: CallContext): Promise<agentV1.ChatResponse> {
  const principal = requirePrincipal(call);
  if (!req.message.trim()) throw new InputError("message must not be empty");
  return runChatTurn(ctx, { principal, opts: call.forward(), log: call.log, deadline: call.deadline }, req);
}
