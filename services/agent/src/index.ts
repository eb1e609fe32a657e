export { runChatTurn, sectionsChanged } from "./commands/chat-turn.js";
export { readJobsEnv, readOpenAiEnv } from "./config.js";
export {
  type AgentConfig,
  type AgentContext,
  createAgentContext,
  DEFAULT_JOBS_CONFIG,
  type JobsConfig,
} from "./context.js";
export * from "./engines/index.js";
export { migrations, SCHEMA } from "./migrations.js";
export { agentHandlers, type RunningAgentService, startAgentService } from "./service.js";
