// Polling for a condition the system reaches on its own (a relay, a sweep, a restart).
import { setTimeout as sleep } from "node:timers/promises";

/**
 * Resolves once `probe()` is true, polling every 100 ms; past `timeoutMs` (ms) throws
 * "timed out waiting for <what>", followed by `detail()` when given (the stack's last log lines).
 */
export async function until(
  what: string,
  probe: () => Promise<boolean>,
  timeoutMs = 15_000,
  detail?: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe()) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}${detail ? `:\n${detail()}` : ""}`);
}
