// What tests and scripts may import from the billing service.

export type { RunningService } from "@redline/service-kit";
export { hashKey } from "./commands/api-keys.js";
export { DEFAULT_AGENT_SIGNUPS_PER_HOUR, MAX_HANDOFF_ATTEMPTS } from "./commands/handoffs.js";
export { PLANS, periodOf, planOf } from "./commands/plans.js";
export { type BillingConfig, loadConfig } from "./config.js";
export { migrations, SCHEMA } from "./db/migrations.js";
export { startBillingService } from "./service.js";
