// Process helpers shared by the embedded servers and the stack supervisor (Linux-first;
// everything degrades gracefully where /proc or setpriv are missing).
import { type ChildProcess, execFileSync, type SpawnOptions, spawn } from "node:child_process";
import { accessSync, constants, existsSync, readFileSync } from "node:fs";
import net from "node:net";
import { basename, delimiter, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/** Receives one line of log output (no trailing newline). */
export type LogFn = (line: string) => void;

/** True when a process with this pid exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  // A zombie (exited, not yet reaped by its parent) counts as gone.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true;
  }
}

/** The process' short name from /proc/<pid>/comm (e.g. "postgres"), or null when unknown. */
export function processName(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    if (existsSync("/proc/self")) return null;
    try {
      // No procfs (macOS): ask ps.
      const comm = execFileSync("ps", ["-p", String(pid), "-o", "comm="], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      }).trim();
      return comm ? basename(comm) : null;
    } catch {
      return null;
    }
  }
}

/** The process' argv from /proc/<pid>/cmdline, or null when unknown. */
export function processArgs(pid: number): string[] | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  } catch {
    return null;
  }
}

/**
 * The process' start time in clock ticks since boot (/proc/<pid>/stat field 22), or null.
 * Together with the pid it identifies a process even when pids are reused.
 */
export function processStartTime(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const value = Number(fields[19]);
    return Number.isFinite(value) ? value : null;
  } catch {
    return null;
  }
}

/** The parent pid from /proc/<pid>/stat, or null when unknown. */
export function parentPid(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    return Number.isInteger(ppid) ? ppid : null;
  } catch {
    return null;
  }
}

/**
 * Refuses to take over a server whose owner is still alive: throws when `pid`'s parent is a live
 * node process (our owners are node processes; an orphan is re-parented to init or a subreaper).
 */
export function assertOrphaned(pid: number, what: string): void {
  const ppid = parentPid(pid);
  if (ppid === null || ppid <= 1 || !isAlive(ppid)) return;
  if (ppid === process.pid || processName(ppid) === "node") {
    throw new Error(
      `${what} is already running (pid ${pid}) for live process ${ppid}${ppid === process.pid ? " (this process)" : ""}: stop that first`,
    );
  }
}

/** Sends a signal, ignoring "no such process". Returns false when the process was already gone. */
export function signal(pid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw err;
  }
}

/** Polls until the pid is gone; resolves true when it exited within `timeoutMs`. */
export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() >= deadline) return false;
    await sleep(50);
  }
  return true;
}

/**
 * Stops a process that is not our child: sends `sig`, waits `graceMs`, then SIGKILLs it
 * (and waits up to 5 s more). Resolves once it is gone; throws if even SIGKILL did not work.
 */
export async function terminate(pid: number, sig: NodeJS.Signals, graceMs: number): Promise<void> {
  if (!signal(pid, sig)) return;
  if (await waitForExit(pid, graceMs)) return;
  signal(pid, "SIGKILL");
  if (!(await waitForExit(pid, 5_000))) throw new Error(`process ${pid} did not exit after SIGKILL`);
}

/** The lowest port the kernel hands out as a source port (ip_local_port_range; 32768 when unknown). */
export function ephemeralLow(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/** Where freePort draws from: above the well-known services, below the kernel's source ports. */
const PICK_FROM = 10_000;
const PICK_BELOW = ephemeralLow();
/** Ports this process handed out: never handed out twice, even once released again. */
const handedOut = new Set<number>();

/** Binds `port` on 127.0.0.1 and releases it: true when nothing held it. */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** Listens on port 0, reads the port the kernel chose, and closes. */
function kernelPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error("could not allocate a free port"))));
    });
  });
}

/**
 * A free TCP port on 127.0.0.1 for a server started later. Racy by nature (free now, bound
 * later), so it is drawn at random from below the kernel's source-port range: a port there
 * cannot be taken meanwhile by an outgoing connection, nor handed to another process's
 * listen(0). In CI one such port was held for good and a service never bound. Falls back to
 * the kernel's choice when that range is empty or full.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 64 && PICK_BELOW > PICK_FROM; attempt++) {
    const port = PICK_FROM + Math.floor(Math.random() * (PICK_BELOW - PICK_FROM));
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  return kernelPort();
}

/** True when something accepts TCP connections on host:port (within `timeoutMs`). */
export function canConnect(port: number, host = "127.0.0.1", timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/** True when we can bind host:port right now (nobody listens there). */
function canBind(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once("error", () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * True when host:port can be bound, checking again every 100 ms for up to `graceMs`: a server of
 * a killed run that was just stopped (or is dying of its death signal) may take a moment to
 * release its port, and refusing to start then would be a false "in use".
 */
export async function isPortFree(port: number, host = "127.0.0.1", graceMs = 2_000): Promise<boolean> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    if (await canBind(port, host)) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Finds an executable on PATH (plus `extraDirs`); null when absent. */
export function findExecutable(name: string, extraDirs: string[] = []): string | null {
  const dirs = [...(process.env.PATH ?? "").split(delimiter), ...extraDirs].filter(Boolean);
  for (const dir of dirs) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  return null;
}

const setprivPath = existsSync("/proc/self/stat") ? findExecutable("setpriv", ["/usr/bin", "/bin"]) : null;

/**
 * Spawns `command` so that it receives `deathSignal` when this process dies, even by SIGKILL
 * (Linux PR_SET_PDEATHSIG through util-linux `setpriv --pdeathsig`, which then execs the
 * command: the returned pid is the command's own pid). Falls back to a plain spawn when setpriv
 * is unavailable or REDLINE_NO_PDEATHSIG=1. Also signals the child from a process 'exit' hook
 * while it is running (covers normal exits everywhere).
 */
export function spawnTied(
  command: string,
  args: string[],
  options: SpawnOptions & { deathSignal: NodeJS.Signals },
): ChildProcess {
  const { deathSignal, ...spawnOptions } = options;
  // REDLINE_NO_PDEATHSIG=1 (tests, debugging) leaves children running when we are killed -9.
  const tie = setprivPath && process.env.REDLINE_NO_PDEATHSIG !== "1";
  const child = tie
    ? spawn(setprivPath, ["--pdeathsig", deathSignal.replace(/^SIG/, ""), "--", command, ...args], spawnOptions)
    : spawn(command, args, spawnOptions);
  const pid = child.pid;
  if (pid !== undefined) {
    const onExit = () => {
      try {
        process.kill(pid, deathSignal);
      } catch {
        // already gone
      }
    };
    process.on("exit", onExit);
    child.once("exit", () => process.removeListener("exit", onExit));
  }
  return child;
}

/** Calls `onLine` for each complete line of a stream (the last partial line on end). */
export function forEachLine(stream: NodeJS.ReadableStream | null | undefined, onLine: (line: string) => void): void {
  if (!stream) return;
  let buffer = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    buffer += chunk;
    let newline = buffer.indexOf("\n");
    while (newline >= 0) {
      const line = buffer.slice(0, newline).replace(/\r$/, "");
      buffer = buffer.slice(newline + 1);
      onLine(line);
      newline = buffer.indexOf("\n");
    }
  });
  stream.on("end", () => {
    if (buffer) onLine(buffer);
    buffer = "";
  });
}

/** Resolves when the child exits (immediately if it already has). */
export function childExited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/** How a detached server stops: its name for the log, the signal, and the grace before SIGKILL. */
export interface StopSpec {
  name: string;
  signal: NodeJS.Signals;
  graceMs: number;
}

/**
 * Lets the event loop end without waiting for `child` (it and its pipes are unref'd), logs an
 * exit that stop() did not ask for, and returns an idempotent stop(): the signal, SIGKILL after
 * `graceMs`, then `cleanup` (pid files, temp data). A second stop() waits for the first.
 */
export function detachServer(
  child: ChildProcess,
  log: LogFn,
  opts: StopSpec,
  cleanup: () => void,
): () => Promise<void> {
  child.unref();
  (child.stdout as unknown as { unref?: () => void } | null)?.unref?.();
  (child.stderr as unknown as { unref?: () => void } | null)?.unref?.();
  let stopping: Promise<void> | undefined;
  child.once("exit", (code, sig) => {
    if (!stopping) log(`${opts.name} exited unexpectedly (code ${code}, signal ${sig})`);
  });
  return () => {
    stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
        const exited = childExited(child);
        await terminate(child.pid, opts.signal, opts.graceMs);
        await exited;
      }
      cleanup();
    })();
    return stopping;
  };
}
