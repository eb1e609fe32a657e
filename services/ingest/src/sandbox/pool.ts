// A small pool of worker processes that run converters. A parser stuck in a synchronous loop
// cannot be interrupted by a promise timeout; a worker can be killed, and its heap is capped, so
// one hostile file costs at most `timeoutMs` and `maxMemoryMb` and then a fresh worker.
// Processes, not worker threads: a thread that hits its heap cap inside some V8 paths aborts
// the whole process ("Reached heap limit"), which would let one upload take ingest down.
import { type ChildProcess, fork } from "node:child_process";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import type { RemoteImages } from "@redline/html-chunks";
import { InputError, UnavailableError } from "@redline/service-kit";
import { type ConvertLimits, type ConvertResult, type DocumentFormat, extensionOf } from "../formats.js";
import { deserializeError, type JobMessage, type ReplyMessage, type WorkerTask } from "./protocol.js";

// Compiled (dist/), the worker body is plain JavaScript and runs as it is. From sources (tsx,
// vitest) it is TypeScript: worker.mjs registers tsx first, and workspace packages must resolve
// to their sources too (the "@redline/source" export condition), as they do in the parent.
const FROM_SOURCE = import.meta.url.endsWith(".ts");
const WORKER_PATH = fileURLToPath(new URL(FROM_SOURCE ? "./worker.mjs" : "./worker-main.js", import.meta.url));
const WORKER_LOADER_ARGS = FROM_SOURCE ? ["--conditions=@redline/source"] : [];
// Enough of a dead worker's stderr to tell an out-of-memory abort from another crash.
const STDERR_TAIL_CHARS = 4_096;

/** Pool sizing and the per-worker memory cap. */
export interface ConverterPoolOptions {
  /** Worker processes (default: CPU count, at most 4). */
  size?: number;
  /** V8 old-generation heap cap of each worker, in MB (default 2048; the 12.5 MB-XML procurement docx peaks near 700). */
  maxMemoryMb?: number;
  /** Remote and relative `<img>` sources in converted HTML: kept (default) or dropped (REMOTE_IMAGES=drop). */
  remoteImages?: RemoteImages;
}

/** One conversion to run. */
export interface ConvertJob {
  format: DocumentFormat;
  filename: string;
  bytes: Buffer;
  limits: ConvertLimits;
  /** Ask for a source map (ConvertOptions.keepSource). */
  keepSource?: boolean;
}

/** How a task is bounded and what its caller is told when it is stopped. */
export interface TaskBounds {
  /** Wall-clock cap from when a worker takes the task, in milliseconds. */
  timeoutMs: number;
  /** The error a task past `timeoutMs` rejects with. */
  onTimeout(): Error;
  /** The error a task that outgrows the heap cap rejects with. */
  onOutOfMemory(maxMemoryMb: number): Error;
}

interface Pending {
  id: number;
  task: WorkerTask;
  bounds: TaskBounds;
  resolve(result: unknown): void;
  reject(err: Error): void;
}

interface Slot {
  worker: ChildProcess | null;
  current: Pending | null;
  timer: NodeJS.Timeout | null;
}

/**
 * Runs conversions and the HTML work of exports in worker processes, one task per worker at a
 * time, queueing the rest in arrival order, so the service's event loop never parses a
 * document. A task past its time bound (measured from when a worker takes it) or over the
 * memory cap rejects with its bounds' error and its worker is replaced. Idle workers do not keep
 * the process alive.
 */
export class ConverterPool {
  private readonly slots: Slot[];
  private readonly maxMemoryMb: number;
  private readonly remoteImages: RemoteImages | undefined;
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;

  constructor(opts: ConverterPoolOptions = {}) {
    this.remoteImages = opts.remoteImages;
    const size = Math.max(1, opts.size ?? Math.min(4, availableParallelism()));
    this.maxMemoryMb = opts.maxMemoryMb ?? 2048;
    this.slots = Array.from({ length: size }, () => ({ worker: null, current: null, timer: null }));
  }

  /** Starts every worker now so the first requests do not pay process start-up. */
  warm(): void {
    for (const slot of this.slots) if (!slot.worker && !this.closed) this.spawn(slot);
  }

  /**
   * Converts in a worker; the HTML comes back sanitized. Rejects with the converter's error,
   * TooManyElementsError (413) past `limits.maxElements`, InputError (400) on timeout or out of
   * memory, UnavailableError after close.
   */
  run(job: ConvertJob): Promise<ConvertResult> {
    const bytes = new Uint8Array(job.bytes.buffer, job.bytes.byteOffset, job.bytes.byteLength);
    const ext = extensionOf(job.filename) || `.${job.format}`;
    return this.runTask<ConvertResult>(
      {
        kind: "convert",
        format: job.format,
        filename: job.filename,
        bytes,
        limits: job.limits,
        keepSource: job.keepSource,
        remoteImages: this.remoteImages,
      },
      {
        timeoutMs: job.limits.timeoutMs,
        onTimeout: () =>
          new InputError(
            `The ${ext} file took longer than ${seconds(job.limits.timeoutMs)} s to convert; it may be damaged or too complex. Save it again or split it, and upload again`,
          ),
        onOutOfMemory: (mb) =>
          new InputError(
            `The ${ext} file needs more than ${mb} MB of memory to convert; split it into smaller documents and upload again`,
          ),
      },
    );
  }

  /** Runs one task in a worker under `bounds`; rejects with the task's error, a bounds error, or UnavailableError after close. */
  runTask<T>(task: WorkerTask, bounds: TaskBounds): Promise<T> {
    if (this.closed) return Promise.reject(new UnavailableError("The ingest converter pool is shut down"));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, task, bounds, resolve: resolve as (r: unknown) => void, reject });
      this.pump();
    });
  }

  /** Terminates the workers; queued and running jobs reject with UnavailableError. */
  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0))
      pending.reject(new UnavailableError("The ingest converter pool is shut down"));
    await Promise.all(
      this.slots.map(async (slot) => {
        const { worker, current } = slot;
        this.release(slot);
        slot.worker = null;
        current?.reject(new UnavailableError("The ingest converter pool is shut down"));
        if (worker) await kill(worker);
      }),
    );
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (this.queue.length === 0) return;
      if (slot.current) continue;
      const pending = this.queue.shift() as Pending;
      this.start(slot, pending);
    }
  }

  private spawn(slot: Slot): ChildProcess {
    const worker = fork(WORKER_PATH, [], {
      // Only the heap cap (and the source condition): the parent's loader flags (tsx, vitest) are
      // not the worker's business.
      execArgv: [...WORKER_LOADER_ARGS, `--max-old-space-size=${this.maxMemoryMb}`],
      serialization: "advanced",
      stdio: ["ignore", "ignore", "pipe", "ipc"],
    });
    unrefWorker(worker);
    slot.worker = worker;
    let stderrTail = "";
    worker.stderr?.setEncoding("utf8");
    worker.stderr?.on("data", (text: string) => {
      stderrTail = (stderrTail + text).slice(-STDERR_TAIL_CHARS);
    });
    worker.on("message", (reply: ReplyMessage) => {
      if (slot.worker !== worker || !slot.current || slot.current.id !== reply.id) return;
      const pending = slot.current;
      this.release(slot);
      if (reply.ok) pending.resolve(reply.result);
      else pending.reject(deserializeError(reply.error));
      this.pump();
    });
    worker.on("error", (err) => {
      if (slot.worker !== worker) return;
      const pending = slot.current;
      this.release(slot);
      slot.worker = null;
      pending?.reject(err);
      this.pump();
    });
    // "close", not "exit": stderr is read to its end first, so an out-of-memory abort is known.
    worker.on("close", (code, signal) => {
      if (slot.worker !== worker) return;
      const pending = slot.current;
      this.release(slot);
      slot.worker = null;
      if (pending) {
        pending.reject(
          signal === "SIGABRT" || /heap out of memory|Reached heap limit/.test(stderrTail)
            ? pending.bounds.onOutOfMemory(this.maxMemoryMb)
            : new Error(`converter worker exited with ${signal ?? `code ${code}`}`),
        );
      }
      this.pump();
    });
    return worker;
  }

  private start(slot: Slot, pending: Pending): void {
    const worker = slot.worker ?? this.spawn(slot);
    slot.current = pending;
    // Referenced while busy: a caller awaiting only this job must keep the process alive.
    worker.ref();
    worker.channel?.ref();
    slot.timer = setTimeout(() => {
      if (slot.current !== pending) return;
      this.release(slot);
      slot.worker = null;
      void kill(worker);
      pending.reject(pending.bounds.onTimeout());
      this.pump();
    }, pending.bounds.timeoutMs);
    const message: JobMessage = { ...pending.task, id: pending.id };
    worker.send(message);
  }

  private release(slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    slot.current = null;
    if (slot.worker) unrefWorker(slot.worker);
  }
}

/** Lets the service exit while this worker is idle (the IPC channel holds a reference too). */
function unrefWorker(worker: ChildProcess): void {
  worker.unref();
  worker.channel?.unref();
}

/** SIGKILL (a stuck parser ignores anything gentler); resolves once the process is gone. */
function kill(worker: ChildProcess): Promise<void> {
  if (worker.exitCode !== null || worker.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    worker.once("exit", () => resolve());
    // An idle worker is unref'd: without this, a caller awaiting close() could see the event
    // loop run dry (and the process exit) before the exit event arrives.
    worker.ref();
    worker.kill("SIGKILL");
  });
}

/** Seconds for a message: one decimal under 10 s. */
export const seconds = (ms: number) => (ms < 10_000 ? (ms / 1000).toFixed(1) : String(Math.round(ms / 1000)));
