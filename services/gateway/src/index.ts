export { createApp } from "./app.js";
export {
  ACCOUNT_LIMIT_FACTOR,
  accountLimitsFor,
  CHAT_DEADLINE_GRACE_MS,
  DEFAULT_RATE_LIMITS,
  DEFAULT_SOURCE_LIMITS,
  type GatewayConfig,
  gatewayConfig,
  type LimiterClass,
  loadConfig,
  type RateLimitPolicy,
  type RateLimitsConfig,
  type SourceLimitsConfig,
} from "./config.js";
export { createContext, type GatewayContext, SERVICE_NAMES, type ServiceName } from "./context.js";
export { requestHash, retryKeyOf } from "./idempotency.js";
export { createJobEventFeed, type JobEventFeed, type JobEventListener } from "./job-events.js";
export { buildOpenApi } from "./openapi.js";
export { openApiDocument } from "./openapi-document.js";
export { type RunningGateway, startGateway } from "./service.js";
