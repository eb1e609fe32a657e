// What one person may hold (issue #30): a cap on live keys per account, since every key is its
// own rate-limit bucket; a cap on organizations a user creates; and the plan a self-service
// organization starts on, so that creating organizations never multiplies free operations.
// docs/accounts.md gives the reasoning.

/** The account caps and the plan of new self-service organizations (BillingConfig). */
export interface AccountLimits {
  /** Live API keys per account: a user's personal keys, or an organization's keys. */
  maxKeysPerAccount: number;
  /** Organizations one user may create with POST /v1/organizations. */
  maxOrganizationsPerUser: number;
  /** The plan a self-service organization starts on. */
  newOrganizationPlan: string;
}

/** MAX_KEYS_PER_ACCOUNT's default. */
export const DEFAULT_MAX_KEYS_PER_ACCOUNT = 25;
/** MAX_ORGANIZATIONS_PER_USER's default. */
export const DEFAULT_MAX_ORGANIZATIONS_PER_USER = 3;
/** NEW_ORGANIZATION_PLAN's default: no operations until an operator grants a plan. */
export const DEFAULT_NEW_ORGANIZATION_PLAN = "none";

/** The defaults, for callers that set none. */
export const DEFAULT_ACCOUNT_LIMITS: AccountLimits = {
  maxKeysPerAccount: DEFAULT_MAX_KEYS_PER_ACCOUNT,
  maxOrganizationsPerUser: DEFAULT_MAX_ORGANIZATIONS_PER_USER,
  newOrganizationPlan: DEFAULT_NEW_ORGANIZATION_PLAN,
};
