// Row types and table names of the billing schema (snake_case, as stored).
import { SCHEMA } from "./migrations.js";

/** Schema-qualified table names. */
export const TABLES = {
  accounts: `${SCHEMA}.accounts`,
  memberships: `${SCHEMA}.memberships`,
  apiKeys: `${SCHEMA}.api_keys`,
  usagePeriods: `${SCHEMA}.usage_periods`,
  charges: `${SCHEMA}.charges`,
  rateLimitBuckets: `${SCHEMA}.rate_limit_buckets`,
  idempotencyRecords: `${SCHEMA}.idempotency_records`,
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

export interface RateLimitBucketRow {
  /** The API key id the bucket belongs to. */
  subject: string;
  /** The endpoint class: expensive, write or read. */
  limiter: string;
  /** Tokens left after the last request (fractional; refilled from updated_at on the next). */
  tokens: number;
  /** Whether the last request took a token. */
  allowed: boolean;
  updated_at: Date;
}

export interface IdempotencyRecordRow {
  owner_id: string;
  idempotency_key: string;
  /** sha256 hex of method, path and canonical body. */
  request_hash: string;
  state: "running" | "done";
  /** The stored response (state done). */
  status: number | null;
  headers: Record<string, string> | null;
  body: Buffer | null;
  created_at: Date;
  /** A running claim past this may be taken over by a retry (its gateway died). */
  lease_until: Date;
  /** 24 h after the claim; an expired key is free again. */
  expires_at: Date;
}
