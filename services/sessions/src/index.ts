// What other packages (tests, scripts) may import from the sessions service.
export { type AttachInput, attachDocument } from "./commands/roster.js";
export { ensureSession, getHistory, getSession, listSessions } from "./commands/sessions.js";
export { appendTurn } from "./commands/turns.js";
export { loadConfig, type SessionsConfig, type WebhooksConfig } from "./config.js";
export { closeContext, createContext, type SessionsContext } from "./context.js";
export { migrations, SCHEMA } from "./db/migrations.js";
export { type RunningSessionsService, startSessionsService } from "./service.js";
