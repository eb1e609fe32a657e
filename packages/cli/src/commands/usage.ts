// `redline usage`: this period's operations (GET /v1/usage, not billed).
import type { CommandContext } from "../context.js";
import { UsageError } from "../errors.js";

/** Prints used/limit/remaining, the period, live promotions and the latest charges. */
export async function usageCommand(ctx: CommandContext): Promise<void> {
  if (ctx.positionals.length > 0) throw new UsageError("usage takes no arguments");
  const usage = await (await ctx.client()).usage();
  ctx.reporter.resultJson(usage);
  const lines = [
    `Plan ${usage.subscription_tier}: ${usage.monthly_used} of ${usage.monthly_limit} operations used, ` +
      `${usage.monthly_remaining} left${usage.quota_exhausted ? " (quota exhausted)" : ""}`,
    `Period ${usage.period_start.slice(0, 10)} to ${usage.period_end.slice(0, 10)}`,
    ...usage.promotions.map(
      (p) => `Promotion ${p.name}: ${p.ops_remaining} of ${p.ops_granted} left, expires ${p.expires_at.slice(0, 10)}`,
    ),
    ...(usage.recent_charges.length > 0 ? ["Recent charges:"] : []),
    ...usage.recent_charges.map((c) => `  ${c.created_at}  ${c.ops} op  ${c.state}  ${c.bucket_used}`),
  ];
  ctx.reporter.result(lines.join("\n"));
}
