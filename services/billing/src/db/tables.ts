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
  handoffs: `${SCHEMA}.handoffs`,
  signupWindows: `${SCHEMA}.signup_windows`,
  rateLimitBuckets: `${SCHEMA}.rate_limit_buckets`,
  idempotencyRecords: `${SCHEMA}.idempotency_records`,
  emailVerifications: `${SCHEMA}.email_verifications`,
  invitations: `${SCHEMA}.invitations`,
} as const;

export interface AccountRow {
  id: string;
  kind: "user" | "organization";
  name: string;
  plan: string;
  /** The email on file (users; PATCH /v1/users/me); null when none was set. */
  email: string | null;
  /** When `email` was proven (a mailed code, or a takeover claimed through it); null = unverified. */
  email_verified_at: Date | null;
  /** Organizations: the user who created it self-service; null when an operator made it. */
  created_by: string | null;
  /** Signed up by an agent (POST /v1/agents/signup) and not yet taken over by a human. */
  is_agent: boolean;
  created_at: Date;
  /** Day of month (1-31) the billing cycle starts on; null = the day of created_at (UTC). */
  anchor_day: number | null;
  /** Custom monthly limit (enterprise); null = the plan's. */
  monthly_limit: number | null;
}

/** A member's role: owners and admins manage members and keys; members use the organization's keys. */
export type MemberRole = "owner" | "admin" | "member";

export interface MembershipRow {
  user_id: string;
  organization_id: string;
  role: MemberRole;
  created_at: Date;
  /** The member chose to show their verified email in the member list. */
  share_email: boolean;
}

export interface ApiKeyRow {
  id: string;
  key_hash: string;
  key_prefix: string;
  user_id: string;
  organization_id: string | null;
  /** The key's label; null when none was given. */
  name: string | null;
  read_only: boolean;
  /** When it last authenticated a request, updated at most once a minute; null when never. */
  last_used_at: Date | null;
  created_at: Date;
  revoked_at: Date | null;
  /** Minted while the account was an agent's: revoked by a takeover, never above a human's key. */
  agent: boolean;
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
  /**
   * reserved (a hold), settled (billed at `ops`), or expired: a hold the sweep released at its
   * expiry, billed nothing unless the turn's late settle still charges it.
   */
  state: "reserved" | "settled" | "expired";
  created_at: Date;
  /** Operations each promotion grant paid; the rest came from the period's usage. */
  grant_parts: GrantPart[];
  /** The bucket that paid first: promotion, monthly or overage. */
  bucket_used: string;
  /** When a still-reserved hold is released by the sweep; null = never (issue #10). */
  expires_at: Date | null;
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
  /** The person the redemption counts against: the user, or the organization's creator. */
  beneficiary_id: string;
}

/** A takeover link of an agent account; the code is stored only as a salted scrypt hash. */
export interface HandoffRow {
  id: string;
  account_id: string;
  email: string;
  code_hash: string;
  failed_attempts: number;
  expires_at: Date;
  /** Set when too many wrong codes disabled the link for good. */
  disabled_at: Date | null;
  claimed_at: Date | null;
  created_at: Date;
}

/** Agent sign-ups of one source address in one fixed window. */
export interface SignupWindowRow {
  source: string;
  window_start: Date;
  count: number;
}

export interface RateLimitBucketRow {
  /** Whose bucket (free text): the API key id, or `account:<owner id>` for an owner account's. */
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

/** A code mailed to prove an email address (PATCH /v1/users/me); stored only as a scrypt hash. */
export interface EmailVerificationRow {
  id: string;
  account_id: string;
  /** The address the code went to; verifying applies only while it is still the email on file. */
  email: string;
  code_hash: string;
  failed_attempts: number;
  expires_at: Date;
  /** Set when too many wrong codes disabled it for good. */
  disabled_at: Date | null;
  used_at: Date | null;
  created_at: Date;
}

/** What became of an invitation; an expired one is a pending one past expires_at. */
export type InvitationStatus = "pending" | "accepted" | "declined" | "revoked";

/** An invitation to join an organization, for an email (verified at acceptance) or a user id. */
export interface InvitationRow {
  id: string;
  organization_id: string;
  email: string | null;
  user_id: string | null;
  role: MemberRole;
  invited_by: string;
  status: InvitationStatus;
  /** The user who accepted it. */
  accepted_by: string | null;
  created_at: Date;
  expires_at: Date;
  /** When it was accepted, declined or revoked. */
  decided_at: Date | null;
}
