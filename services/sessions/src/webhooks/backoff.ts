// The retry schedule of webhook deliveries, defined once: exponential from the configured base
// (WEBHOOK_RETRY_BASE_MS), capped, with jitter, for RETRY_WINDOW_MS after the event was enqueued.

/** How long a delivery is retried after it was enqueued (ms); then it is `failed`. */
export const RETRY_WINDOW_MS = 24 * 3600_000;

/** The longest wait between two attempts (ms). */
export const MAX_RETRY_DELAY_MS = 3600_000;

/**
 * The wait before the next attempt after `failedAttempts` failures (1 = the first try failed):
 * base · 2^(n−1), capped at MAX_RETRY_DELAY_MS, with "equal jitter" (half fixed, half random) so
 * endpoints that failed together do not retry together. `random` in [0, 1) (tests pass their own).
 */
export function retryDelayMs(failedAttempts: number, baseMs: number, random: () => number = Math.random): number {
  const exp = Math.min(MAX_RETRY_DELAY_MS, baseMs * 2 ** Math.max(0, failedAttempts - 1));
  return Math.round(exp / 2 + (random() * exp) / 2);
}

/** When to try next, or null when the next attempt would fall outside the retry window (the delivery fails). */
export function nextAttemptAt(
  failedAttempts: number,
  enqueuedAt: Date,
  baseMs: number,
  now = Date.now(),
  random: () => number = Math.random,
): Date | null {
  const at = now + retryDelayMs(failedAttempts, baseMs, random);
  return at > enqueuedAt.getTime() + RETRY_WINDOW_MS ? null : new Date(at);
}
