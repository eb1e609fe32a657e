// Everything a billing handler uses, built once from the config.
import { createDb, createLogger, type Knex, type Logger } from "@redline/service-kit";
import { type Clock, createClock } from "./clock.js";
import { type AccountLimits, DEFAULT_ACCOUNT_LIMITS } from "./commands/account-limits.js";
import { DEFAULT_AGENT_SIGNUPS_PER_HOUR } from "./commands/handoffs.js";
import type { BillingConfig } from "./config.js";
import { SCHEMA } from "./db/migrations.js";

/** The billing service's dependencies. */
export interface BillingContext {
  /** Pool whose search_path is schema `billing`. */
  db: Knex;
  log: Logger;
  /** "Now" for periods, grant expiry and Retry-After (movable only with cfg.testClock). */
  clock: Clock;
  /** Agent sign-ups per source address per hour (BillingConfig.agentSignupsPerHour). */
  agentSignupsPerHour: number;
  /** Caps per account and the plan of new self-service organizations (BillingConfig.accountLimits). */
  accountLimits: AccountLimits;
}

/** Opens the pool and the logger (no I/O until the first query). */
export function createContext(cfg: BillingConfig): BillingContext {
  return {
    db: createDb(cfg.databaseUrl, SCHEMA),
    log: createLogger("billing", cfg.logLevel),
    clock: createClock(cfg.testClock ?? false),
    agentSignupsPerHour: cfg.agentSignupsPerHour ?? DEFAULT_AGENT_SIGNUPS_PER_HOUR,
    accountLimits: { ...DEFAULT_ACCOUNT_LIMITS, ...cfg.accountLimits },
  };
}

/** Releases the pool. */
export async function closeContext(ctx: BillingContext): Promise<void> {
  await ctx.db.destroy();
}
