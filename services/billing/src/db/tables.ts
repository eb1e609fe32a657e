// Row types and table names of the billing schema (snake_case, as stored).
import { SCHEMA } from "./migrations.js";

/** Schema-qualified table names. */
export const TABLES = {
  accounts: `${SCHEMA}.accounts`,
  memberships: `${SCHEMA}.memberships`,
  apiKeys: `${SCHEMA}.api_keys`,
  usagePeriods: `${SCHEMA}.usage_periods`,
  charges: `${SCHEMA}.charges`,
} as const;

export interface AccountRow {
  id: string;
  kind: "user" | "organization";
  name: string;
  plan: string;
  /** The email on file (users; PATCH /v1/users/me); null when none was set. */
  email: string | null;
  created_at: Date;
}

export interface MembershipRow {
  user_id: string;
  organization_id: string;
}

export interface ApiKeyRow {
  id: string;
  key_hash: string;
  key_prefix: string;
  user_id: string;
  organization_id: string | null;
  created_at: Date;
  revoked_at: Date | null;
}

export interface UsagePeriodRow {
  owner_id: string;
  period_start: string;
  ops_used: number;
}

export interface ChargeRow {
  owner_id: string;
  charge_key: string;
  period_start: string;
  ops: number;
  state: "reserved" | "settled";
  created_at: Date;
}
