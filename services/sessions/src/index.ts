export {
  appendTurn,
  attachDocument,
  ensureSession,
  getHistory,
  getSession,
  listSessions,
} from "./commands/sessions.js";
export { migrations, SCHEMA } from "./migrations.js";
export {
  type RunningSessionsService,
  type SessionsConfig,
  sessionsHandlers,
  startSessionsService,
  workspaceHandlers,
} from "./service.js";
