// What tests and scripts may import from the billing service.

export type { RunningService } from "@redline/service-kit";
export { hashKey } from "./commands/api-keys.js";
export { PLANS, periodOf, planOf } from "./commands/plans.js";
export { type BillingConfig, loadConfig } from "./config.js";
export { migrations, SCHEMA } from "./db/migrations.js";
export { startBillingService } from "./service.js";
