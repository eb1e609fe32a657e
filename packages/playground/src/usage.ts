// The usage meter in the top bar: GET /v1/usage (free), operations used of the monthly quota.
import { byId, setWidth } from "./dom.js";
import { client, hasClient } from "./session.js";

/** Re-reads the usage and redraws the meter; nothing without a key. */
export async function refreshUsage(): Promise<void> {
  if (!hasClient()) return;
  const usage = await client().usage();
  const used = usage.monthly_used;
  const limit = usage.monthly_limit;
  const percent = limit > 0 ? (used / limit) * 100 : 0;
  byId("usage").hidden = false;
  byId("usage-text").textContent =
    `${used.toLocaleString()} / ${limit.toLocaleString()} operations · ${usage.subscription_tier}` +
    (usage.quota_exhausted ? " · quota exhausted" : "");
  const fill = byId("usage-fill");
  setWidth(fill, percent);
  fill.classList.toggle("high", percent >= 80 && percent < 100);
  fill.classList.toggle("full", percent >= 100 || usage.quota_exhausted);
  byId("usage").title =
    `Period ${usage.period_start.slice(0, 10)} to ${usage.period_end.slice(0, 10)}; ${usage.monthly_remaining} left`;
}
