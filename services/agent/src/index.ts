export { runChatTurn, sectionsChanged } from "./commands/chat-turn.js";
export { readOpenAiEnv } from "./config.js";
export { type AgentConfig, type AgentContext, createAgentContext } from "./context.js";
export * from "./engines/index.js";
export { agentHandlers, type RunningAgentService, startAgentService } from "./service.js";
