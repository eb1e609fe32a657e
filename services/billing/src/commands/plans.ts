// Plans and their monthly quotas (unshown-parts.md, Accounts: free 500 with a hard stop,
// plus 2,000, pro 10,000 with overage allowed, enterprise custom).

/** A plan's monthly quota in operations and whether usage may pass it. */
export interface Plan {
  name: string;
  monthlyLimit: number;
  hardStop: boolean;
}

export const PLANS: Record<string, Plan> = {
  free: { name: "free", monthlyLimit: 500, hardStop: true },
  plus: { name: "plus", monthlyLimit: 2000, hardStop: true },
  pro: { name: "pro", monthlyLimit: 10_000, hardStop: false },
  enterprise: { name: "enterprise", monthlyLimit: 100_000, hardStop: false },
};

/** The plan by name; unknown names fall back to free so a typo never grants more. */
export function planOf(name: string): Plan {
  return PLANS[name] ?? PLANS.free;
}

/** The current billing period: calendar months in UTC. `start` is a YYYY-MM-01 date string. */
export function periodOf(now: Date): { start: string; end: Date } {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { start: start.toISOString().slice(0, 10), end };
}
