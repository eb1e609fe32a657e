// podman as the smoke calls it: rootful, with the project-local containers.conf, and a ledger
// of everything the run created so the teardown removes exactly that (never another run's).
import { execFile } from "node:child_process";
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { RUN_LABEL } from "./translate.js";

/** The containers.conf beside this file (runc, nofile/nproc ulimits, netavark). */
export const CONTAINERS_CONF = fileURLToPath(new URL("./containers.conf", import.meta.url));

export interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `podman ARGS`; `env` is added to podman's environment (Secret values named by
 * `--env NAME` travel this way, never in argv). Resolves with the exit code; never rejects.
 */
export function podman(
  args: string[],
  opts: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      "podman",
      args,
      {
        env: { ...process.env, ...opts.env, CONTAINERS_CONF },
        timeout: opts.timeoutMs ?? 120_000,
        maxBuffer: 32 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

/** Like podman(), but rejects with podman's message on a non-zero exit. */
export async function podmanOk(args: string[], opts: { env?: Record<string, string>; timeoutMs?: number } = {}) {
  const r = await podman(args, opts);
  if (r.code !== 0)
    throw new Error(`podman ${args.slice(0, 3).join(" ")} … failed (${r.code}): ${lastLines(r.stderr, 5)}`);
  return r.stdout.trim();
}

export function lastLines(text: string, n: number): string {
  return text
    .split("\n")
    .filter((l) => l.trim() && !l.includes("failed to connect to syslog"))
    .slice(-n)
    .join("\n");
}

/** What one run created, in creation order; removed by teardown() in reverse. */
export class Ledger {
  readonly containers: string[] = [];
  readonly volumes: string[] = [];
  network?: string;
  filesDir?: string;
  /** Set when the teardown begins: nothing new may be created after it. */
  closed = false;
  private readonly pending = new Set<Promise<unknown>>();

  constructor(readonly runId: string) {}

  /**
   * Creates something of the run's through `create` unless the teardown has begun (then
   * undefined); the teardown waits for creations in flight, so none outlives it.
   */
  async create<T>(create: () => Promise<T>): Promise<T | undefined> {
    if (this.closed) return undefined;
    const p = create();
    this.pending.add(p);
    try {
      return await p;
    } finally {
      this.pending.delete(p);
    }
  }

  /**
   * Removes the run's containers (kill, no grace), volumes, network and files; then lists what
   * still carries the run's label. Returns the names left behind (empty when clean).
   */
  async teardown(): Promise<string[]> {
    this.closed = true;
    await Promise.allSettled([...this.pending]);
    const label = `label=${RUN_LABEL}=${this.runId}`;
    const labelled = await podman(["ps", "-a", "-q", "--filter", label]);
    const ids = [...new Set([...this.containers, ...labelled.stdout.split("\n").filter(Boolean)])];
    if (ids.length > 0) await podman(["rm", "-f", "-t", "0", "--ignore", ...ids], { timeoutMs: 120_000 });
    if (this.volumes.length > 0) await podman(["volume", "rm", "-f", ...this.volumes]);
    if (this.network) await podman(["network", "rm", "-f", this.network]);
    if (this.filesDir) rmSync(this.filesDir, { recursive: true, force: true });
    const left: string[] = [];
    const still = await podman(["ps", "-a", "--format", "{{.Names}}", "--filter", label]);
    left.push(...still.stdout.split("\n").filter(Boolean));
    const vols = await podman(["volume", "ls", "--format", "{{.Name}}", "--filter", label]);
    left.push(...vols.stdout.split("\n").filter(Boolean));
    if (this.network && (await podman(["network", "exists", this.network])).code === 0) left.push(this.network);
    return left;
  }
}
