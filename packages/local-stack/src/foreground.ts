// `pnpm start`'s supervisor in the foreground: starts the stack, stops it on SIGINT, SIGTERM or
// SIGHUP, and exits. A terminal's Ctrl-C (or a `kill` of the process group) reaches this process
// more than once: the terminal signals the whole foreground group, and wrappers in it (pnpm, its
// shell, tsx's CLI) forward the signal again. Only a signal that comes well after the first is a
// person insisting.
import { type RunningStack, type StartStackOptions, startStack } from "./stack.js";

/**
 * A second signal this soon after the first (ms) is the same stop delivered again by a wrapper,
 * not a second Ctrl-C. Forwarding takes milliseconds (tsx waits 30 ms for its child before
 * relaying; a loaded machine adds some); a person's second press takes longer.
 */
export const REPEATED_SIGNAL_WINDOW_MS = 2_000;

/** The signals that stop the stack. */
const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

export interface ForegroundOptions extends Omit<StartStackOptions, "signal" | "killSignal" | "foreground"> {
  /** Supervisor lines (default stdout). */
  say?: (line: string) => void;
  /** Ends the process (default process.exit); tests pass their own. */
  exit?: (code: number) => void;
  /** A repeated signal within this many ms of the first is ignored (default REPEATED_SIGNAL_WINDOW_MS). */
  repeatWindowMs?: number;
}

/**
 * Runs the stack until a stop signal: the first stops it gracefully (gateway, services with
 * their drain, infrastructure) and exits 0; repeats within `repeatWindowMs` are ignored;
 * a later one kills the services at once and exits 1 once nothing of the stack runs. A signal
 * during startup aborts it (everything started is stopped). Exits 1 when the stack cannot start.
 * Resolves once the stack is up (the process then stays alive until a signal).
 */
export async function runForeground(opts: ForegroundOptions = {}): Promise<RunningStack | undefined> {
  const say = opts.say ?? ((line: string) => console.log(line));
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  const repeatWindowMs = opts.repeatWindowMs ?? REPEATED_SIGNAL_WINDOW_MS;
  const abort = new AbortController();
  const kill = new AbortController();
  let stack: RunningStack | undefined;
  let first: { signal: NodeJS.Signals; at: number } | undefined;
  let repeatsIgnored = 0;
  // Keeps the supervisor alive even if every service has given up.
  const keepAlive = setInterval(() => {}, 1 << 30);
  const finish = (code: number) => {
    clearInterval(keepAlive);
    exit(code);
  };

  const stopGracefully = (s: RunningStack) =>
    s.stop().then(
      () => finish(kill.signal.aborted ? 1 : 0),
      (err: unknown) => {
        say(`[supervisor] shutdown error: ${(err as Error).message}`);
        finish(1);
      },
    );

  const onSignal = (sig: NodeJS.Signals) => {
    const now = Date.now();
    if (!first) {
      first = { signal: sig, at: now };
      say(`[supervisor] ${sig} received, shutting down`);
      abort.abort();
      // Still starting: startStack sees the abort, stops what it started and rejects.
      if (stack) void stopGracefully(stack);
      return;
    }
    if (kill.signal.aborted) return;
    if (now - first.at < repeatWindowMs) {
      if (repeatsIgnored++ === 0)
        say(`[supervisor] ${sig} again within ${repeatWindowMs} ms: the same stop, still draining`);
      return;
    }
    say(`[supervisor] ${sig} again: stopping now without the drain`);
    kill.abort();
  };
  for (const sig of STOP_SIGNALS) process.on(sig, onSignal);

  try {
    const { say: _say, exit: _exit, repeatWindowMs: _window, ...stackOpts } = opts;
    stack = await startStack({ ...stackOpts, foreground: !opts.log, signal: abort.signal, killSignal: kill.signal });
  } catch (err) {
    if (first) {
      say("[supervisor] startup aborted");
      finish(kill.signal.aborted ? 1 : 0);
    } else {
      say(`[supervisor] ${(err as Error).message}`);
      finish(1);
    }
    return undefined;
  }
  if (first) {
    await stopGracefully(stack);
    return undefined;
  }
  return stack;
}
