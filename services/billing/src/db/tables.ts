// Row types and table names of the billing schema (snake_case, as stored).
import { SCHEMA } from "./migrations.js";

/** Schema-qualified table names. */
export const TABLES = {
  accounts: `${SCHEMA}.accounts`,
  memberships: `${SCHEMA}.memberships`,
  apiKeys: `${SCHEMA}.api_keys`,
  usagePeriods: `${SCHEMA}.usage_periods`,
  charges: `${SCHEMA}.charges`,
  promotions: `${SCHEMA}.promotions`,
  promotionGrants: `${SCHEMA}.promotion_grants`,
} as const;

export interface AccountRow {
  id: string;
  kind: "user" | "organization";
  name: string;
  plan: string;
  /** The email on file (users; PATCH /v1/users/me); null when none was set. */
  email: string | null;
  created_at: Date;
  /** Day of month (1-31) the billing cycle starts on; null = the day of created_at (UTC). */
  anchor_day: number | null;
  /** Custom monthly limit (enterprise); null = the plan's. */
  monthly_limit: number | null;
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
  /** Operations each promotion grant paid; the rest came from the period's usage. */
  grant_parts: GrantPart[];
  /** The bucket that paid first: promotion, monthly or overage. */
  bucket_used: string;
}

/** Operations one promotion grant paid for a charge. */
export interface GrantPart {
  redemption_id: string;
  ops: number;
}

export interface PromotionRow {
  id: string;
  /** As created; compared by lower(code). */
  code: string;
  name: string;
  /** Operations each redemption grants. */
  ops: number;
  expires_at: Date;
  /** null = unlimited. */
  max_redemptions: number | null;
  redemptions: number;
  created_at: Date;
}

/** A redemption: the grant of one promotion to one owner (its id is the redemption_id). */
export interface PromotionGrantRow {
  id: string;
  owner_id: string;
  promotion_id: string;
  name: string;
  ops_granted: number;
  ops_remaining: number;
  expires_at: Date;
  created_at: Date;
}
