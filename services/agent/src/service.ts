// The agent service as a library: build from config, start, close. main.ts is the thin shell.
import { agentV1 } from "@redline/grpc-stubs";
import { bindService, healthService, startGrpcServer } from "@redline/service-kit";
import { runChatTurn } from "./commands/chat-turn.js";
import { type AgentConfig, type AgentContext, closeAgentContext, createAgentContext } from "./context.js";

/** A started service. */
export interface RunningAgentService {
  address: string;
  context: AgentContext;
  close(): Promise<void>;
}

/** Handlers of agent.v1.AgentService. */
export function agentHandlers(ctx: AgentContext) {
  return bindService(agentV1.AgentServiceService, {
    chat: (req, call) => runChatTurn(ctx, call, req),
  });
}

/** Serves AgentService and Health; health answers when the services the agent calls do. */
export async function startAgentService(
  cfg: AgentConfig,
  overrides: Partial<AgentContext> = {},
): Promise<RunningAgentService> {
  const ctx = createAgentContext(cfg, overrides);
  const server = await startGrpcServer(cfg.grpcAddress, [agentHandlers(ctx), healthService({})], ctx.log);
  ctx.log.info({ address: server.address, engine: ctx.engine.name }, "agent listening");
  return {
    address: server.address,
    context: ctx,
    async close() {
      await server.close();
      closeAgentContext(ctx);
    },
  };
}
