// One supervised service process: started in its own process group, its output prefixed,
// restarted with backoff when it crashes, stopped with SIGTERM and its shutdown deadline.
import type { ChildProcess } from "node:child_process";
import { childExited, forEachLine, signal, spawnTied, waitForExit } from "@redline/local-infra";
import { SHUTDOWN_DEADLINE_MS } from "@redline/service-kit";
import { REPO_ROOT, type ServiceName } from "./names.js";

/**
 * How long a stopping service gets before SIGKILL: its own shutdown deadline (unready window,
 * drain, release) plus a margin, as Kubernetes gives 30 s. A shorter grace cut a draining turn off.
 */
export const STOP_GRACE_MS = SHUTDOWN_DEADLINE_MS + 5_000;

/** Sends `sig` to the process group led by `pid` (services run detached), or to `pid` alone when there is none. */
function sendGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    signal(pid, sig);
  }
}

/**
 * SIGTERM to the process group (leader = pid), then SIGCONT so a stopped (SIGSTOP, Ctrl-Z)
 * process wakes to handle it, as systemd does; SIGKILL after graceMs.
 */
export async function stopGroup(pid: number, graceMs: number): Promise<void> {
  sendGroup(pid, "SIGTERM");
  sendGroup(pid, "SIGCONT");
  if (await waitForExit(pid, graceMs)) return;
  sendGroup(pid, "SIGKILL");
  await waitForExit(pid, 5_000);
}

const RESTART_WINDOW_MS = 60_000;
const MAX_RESTARTS = 5;

/** What a Supervised service needs from the stack. */
export interface SupervisedOptions {
  name: ServiceName;
  /** The entry file (src/main.ts or dist/main.js). */
  entry: string;
  /** Node arguments before the entry (RUNTIME_ARGS). */
  nodeArgs: string[];
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  /** Called after each (re)start: the pid changed. */
  onSpawn: () => void;
  /** Called once when the service crashed too often and is not restarted any more. */
  onGiveUp: (name: ServiceName) => void;
}

/** One service process, restarted with backoff when it crashes (at most 5 times a minute). */
export class Supervised {
  child: ChildProcess | undefined;
  private restarts: number[] = [];
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;
  /** Recent output, for error messages. */
  readonly recent: string[] = [];
  gaveUp = false;

  constructor(private readonly opts: SupervisedOptions) {}

  get name(): ServiceName {
    return this.opts.name;
  }

  start(): void {
    this.recent.length = 0;
    const child = spawnTied(process.execPath, [...this.opts.nodeArgs, this.opts.entry], {
      cwd: REPO_ROOT,
      env: this.opts.env,
      stdio: ["ignore", "pipe", "pipe"],
      // Own process group: a terminal's Ctrl-C reaches only the supervisor, which stops services in order.
      detached: true,
      deathSignal: "SIGTERM",
    });
    this.child = child;
    const prefix = `${this.name.padEnd(9)} | `;
    const onLine = (line: string) => {
      this.recent.push(line);
      if (this.recent.length > 20) this.recent.shift();
      this.opts.log(prefix + line);
    };
    forEachLine(child.stdout, onLine);
    forEachLine(child.stderr, onLine);
    child.once("error", (err) => this.opts.log(`[supervisor] could not start ${this.name}: ${err.message}`));
    child.once("exit", (code, sig) => this.exited(child, code, sig));
    this.opts.onSpawn();
  }

  private exited(child: ChildProcess, code: number | null, sig: NodeJS.Signals | null): void {
    if (this.stopping || child !== this.child) return;
    const now = Date.now();
    this.restarts = this.restarts.filter((t) => now - t < RESTART_WINDOW_MS);
    const how = sig ? `signal ${sig}` : `code ${code}`;
    if (this.restarts.length >= MAX_RESTARTS) {
      this.gaveUp = true;
      this.opts.log(
        `[supervisor] ${this.name} exited (${how}) and crashed ${MAX_RESTARTS} times within a minute: not restarting it`,
      );
      this.opts.onGiveUp(this.name);
      return;
    }
    const delay = Math.min(500 * 2 ** this.restarts.length, 10_000);
    this.restarts.push(now);
    this.opts.log(`[supervisor] ${this.name} exited (${how}); restarting in ${delay} ms`);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.stopping) this.start();
    }, delay);
  }

  /** The running process, or undefined when there is none (never started, exited, between restarts). */
  private running(): (ChildProcess & { pid: number }) | undefined {
    const child = this.child;
    if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return undefined;
    return child as ChildProcess & { pid: number };
  }

  /** Stops the service for good: SIGTERM to its group, SIGKILL after STOP_GRACE_MS. Resolves once it exited. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    const child = this.running();
    if (!child) return;
    const exited = childExited(child);
    await stopGroup(child.pid, STOP_GRACE_MS);
    await exited;
  }

  /** SIGKILLs the service's process group at once (an impatient second Ctrl-C); not restarted. */
  kill(): void {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    const child = this.running();
    if (child) sendGroup(child.pid, "SIGKILL");
  }
}
