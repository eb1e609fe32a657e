// A background pass run on a timer (billing's expired-hold sweep, ingest's expired-file sweep).
import type { Logger } from "./logger.js";

/** A started periodic pass; stop() clears the timer and waits for a pass under way. */
export interface Periodic {
  stop(): Promise<void>;
}

/**
 * Runs `pass` every `periodMs` ms on an unref'd timer (it never keeps the process alive), one at a
 * time: a tick while the last pass still runs is skipped rather than queued. A pass that throws
 * (Postgres or S3 restarting) is logged at warn as "`name` failed" and the next tick tries again.
 */
export function startPeriodic(name: string, periodMs: number, log: Logger, pass: () => Promise<void>): Periodic {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = pass()
      .catch((err: unknown) => log.warn({ err }, `${name} failed`))
      .finally(() => {
        running = undefined;
      });
  }, periodMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
