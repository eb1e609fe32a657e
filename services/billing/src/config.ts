// Billing configuration: the only code of the service that reads environment variables.
import { listenAddr, readMetricsAddr, readTracingEnv, requireEnv, type TracingConfig } from "@redline/service-kit";
import type { AccountLimits } from "./commands/account-limits.js";
import { PLANS } from "./commands/plans.js";

/** What the billing service needs: where to listen and its database. */
export interface BillingConfig {
  /** METRICS_ADDR: host:port of GET /metrics (port 0 picks one), "off" records nothing; unset: not served. */
  metricsAddr?: string;
  /** host:port of the gRPC server; port 0 picks a free port. */
  grpcAddress: string;
  /** Postgres URL; the service keeps its rows in schema `billing`. */
  databaseUrl: string;
  /** pino level; default info. */
  logLevel?: string;
  /** OTLP trace export from OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT and OTEL_SERVICE_NAME; absent: off. */
  tracing?: TracingConfig;
  /** Lets the SetTestClock RPC move billing's clock (test stacks only); default false. */
  testClock?: boolean;
  /** Agent sign-ups (POST /v1/agents/signup) per source address per hour; default 10. */
  agentSignupsPerHour?: number;
  /** Period of the sweep releasing expired holds, in ms; default 30 s (HOLD_SWEEP_MS). */
  holdSweepMs?: number;
  /** Caps per account and the plan of new self-service organizations; unset fields take the defaults. */
  accountLimits?: Partial<AccountLimits>;
}

/** A positive integer variable, undefined when unset; throws naming it when malformed. */
function positiveInt(env: Record<string, string | undefined>, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined) return undefined;
  if (!/^[1-9][0-9]{0,8}$/.test(raw)) throw new Error(`${name} must be an integer >= 1, got '${raw}'`);
  return Number(raw);
}

/**
 * Reads LISTEN_ADDR (the bind address; default BILLING_ADDR, else 127.0.0.1:8064), DATABASE_URL
 * (required), LOG_LEVEL, REDLINE_TEST_CLOCK ("1" enables SetTestClock; never set it in production)
 * AGENT_SIGNUPS_PER_HOUR (an integer >= 1, default 10), HOLD_SWEEP_MS (the expired-hold
 * sweep's period, an integer >= 1, default 30 000), MAX_KEYS_PER_ACCOUNT (default 25),
 * MAX_ORGANIZATIONS_PER_USER (default 3) and NEW_ORGANIZATION_PLAN (a plan name, default none);
 * throws naming a malformed one.
 */
export function loadConfig(env: Record<string, string | undefined>): BillingConfig {
  const signups = env.AGENT_SIGNUPS_PER_HOUR;
  if (signups !== undefined && !/^[1-9][0-9]{0,6}$/.test(signups))
    throw new Error(`AGENT_SIGNUPS_PER_HOUR must be an integer >= 1, got '${signups}'`);
  const sweep = env.HOLD_SWEEP_MS;
  if (sweep !== undefined && !/^[1-9][0-9]{0,8}$/.test(sweep))
    throw new Error(`HOLD_SWEEP_MS must be an integer >= 1, got '${sweep}'`);
  const newOrganizationPlan = env.NEW_ORGANIZATION_PLAN;
  if (newOrganizationPlan !== undefined && !PLANS[newOrganizationPlan])
    throw new Error(
      `NEW_ORGANIZATION_PLAN must be one of ${Object.keys(PLANS).join(", ")}, got '${newOrganizationPlan}'`,
    );
  const accountLimits: Partial<AccountLimits> = {};
  const maxKeys = positiveInt(env, "MAX_KEYS_PER_ACCOUNT");
  if (maxKeys !== undefined) accountLimits.maxKeysPerAccount = maxKeys;
  const maxOrgs = positiveInt(env, "MAX_ORGANIZATIONS_PER_USER");
  if (maxOrgs !== undefined) accountLimits.maxOrganizationsPerUser = maxOrgs;
  if (newOrganizationPlan !== undefined) accountLimits.newOrganizationPlan = newOrganizationPlan;
  return {
    accountLimits,
    grpcAddress: listenAddr(env, "billing"),
    metricsAddr: readMetricsAddr(env),
    databaseUrl: requireEnv(env, "DATABASE_URL"),
    logLevel: env.LOG_LEVEL,
    tracing: readTracingEnv(env),
    testClock: env.REDLINE_TEST_CLOCK === "1",
    agentSignupsPerHour: signups === undefined ? undefined : Number(signups),
    holdSweepMs: sweep === undefined ? undefined : Number(sweep),
  };
}
