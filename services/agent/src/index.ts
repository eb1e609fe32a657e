// What other packages (tests, scripts) may import from the agent.
export { runChatTurn } from "./commands/chat.js";
export {
  type AgentConfig,
  DEFAULT_JOBS_CONFIG,
  type JobsConfig,
  loadConfig,
  readJobsEnv,
  readOpenAiEnv,
} from "./config.js";
export { type AgentContext, createContext } from "./context.js";
export { migrations, SCHEMA } from "./db/migrations.js";
export { parseFilesInstruction } from "./engines/files-tools.js";
export * from "./engines/index.js";
export { type RunningAgentService, startAgentService } from "./service.js";
export { sectionsChanged } from "./turn/operations.js";
