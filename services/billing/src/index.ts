export { hashKey } from "./commands/api-keys.js";
export { migrations, SCHEMA } from "./migrations.js";
export { PLANS, periodOf, planOf } from "./plans.js";
export { type BillingConfig, billingHandlers, type RunningService, startBillingService } from "./service.js";
