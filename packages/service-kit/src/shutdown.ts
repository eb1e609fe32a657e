// Graceful shutdown, the same for every service: on SIGTERM (or SIGINT) report not ready, keep
// serving briefly so probes and balancers stop routing here, stop accepting, drain what is in
// flight, release pools and connections, exit 0 — or exit anyway at a hard deadline, and at
// once on a second signal.
import { constants } from "node:os";
import type { Logger } from "./logger.js";

/** From the first signal to a forced exit; Kubernetes sends SIGKILL 30 s after SIGTERM. */
export const SHUTDOWN_DEADLINE_MS = 25_000;

/** How long a stopping service reports NOT_SERVING while it still accepts work. */
export const UNREADY_MS = 1_000;

/** Kept out of the drain budget for releasing pools and connections afterwards. */
const RELEASE_MARGIN_MS = 4_000;

/** How a service closes; both durations in ms. */
export interface CloseOptions {
  /**
   * Time health answers NOT_SERVING (gateway: /health 503) while requests are still accepted,
   * before the listener closes. Default 0 (library use: close at once).
   */
  unreadyMs?: number;
  /** Time in-flight calls and requests get to finish once no new ones are accepted (default 5000). */
  drainMs?: number;
}

/** Anything main.ts can stop: a started service or the gateway. */
export interface Stoppable {
  close(opts?: CloseOptions): Promise<void>;
}

/** Knobs of onShutdown (tests shorten them). */
export interface ShutdownOptions {
  /** Default SHUTDOWN_DEADLINE_MS. */
  deadlineMs?: number;
  /** Default UNREADY_MS. */
  unreadyMs?: number;
  /** Called instead of process.exit (tests). */
  exit?: (code: number) => void;
}

/**
 * Installs SIGTERM and SIGINT handlers. The first signal runs `close` with the unready window
 * and a drain budget that leaves time to release within `deadlineMs`, then exits 0 (1 when
 * close rejects). If close has not finished at the deadline, logs it and exits 1. A second
 * signal exits at once with 128 + the signal number. Returns a function that removes the handlers.
 */
export function onShutdown(
  close: (opts: CloseOptions) => Promise<void>,
  log: Logger,
  opts: ShutdownOptions = {},
): () => void {
  const deadlineMs = opts.deadlineMs ?? SHUTDOWN_DEADLINE_MS;
  const unreadyMs = Math.min(opts.unreadyMs ?? UNREADY_MS, deadlineMs / 4);
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  let startedAt = 0;
  const handler = (signal: NodeJS.Signals) => {
    if (startedAt) {
      log.warn({ signal }, `${signal} again: exiting now without finishing the shutdown`);
      exit(128 + (constants.signals[signal] ?? 0));
      return;
    }
    startedAt = Date.now();
    const drainMs = Math.max(0, deadlineMs - unreadyMs - RELEASE_MARGIN_MS);
    log.info({ signal, deadlineMs, unreadyMs, drainMs }, `${signal}: shutting down`);
    const hardStop = setTimeout(() => {
      log.error({ deadlineMs }, `shutdown did not finish within ${deadlineMs} ms: exiting anyway`);
      exit(1);
    }, deadlineMs);
    close({ unreadyMs, drainMs }).then(
      () => {
        clearTimeout(hardStop);
        log.info({ ms: Date.now() - startedAt }, "shut down cleanly");
        exit(0);
      },
      (err: unknown) => {
        clearTimeout(hardStop);
        log.error({ err, ms: Date.now() - startedAt }, "shutdown failed");
        exit(1);
      },
    );
  };
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
  return () => {
    process.off("SIGINT", handler);
    process.off("SIGTERM", handler);
  };
}
