// GET /v1/chat/{session_id}/stream: a job's progress as server-sent events (unshown-parts.md,
// Progress stream), fed by NATS job events when configured, else by polling the agent.
import { type agentJobsV1, agentV1 } from "@redline/grpc-stubs";
import { RedlineError } from "@redline/service-kit";
import type { Response } from "express";
import { z } from "zod";
import { recheckKey } from "../../auth.js";
import type { WireJobEvent } from "../../job-events.js";
import { defineRoute, type RouteCall } from "../../route-registry.js";
import { chatResponseToJson } from "../chat/mappers.js";
import { endpoint } from "../shared/routes.js";
import { SessionPathSchema } from "../shared/schemas.js";
import { eventData, sseEventData } from "./mappers.js";
import { StreamQuerySchema } from "./schemas.js";

/** Default comment heartbeat period (GatewayConfig.streamHeartbeatMs). */
const HEARTBEAT_MS = 15_000;

/**
 * How often a stream asks the agent again while NATS delivers: only a safety net (a NATS reconnect
 * refetches at once), jittered ±25 % so hundreds of idle streams opened together do not ask in
 * the same tick.
 */
const REFETCH_LIVE_MS = 15_000;

/** How often a stream asks the agent while NATS is unreachable: the mechanism then. */
const REFETCH_POLL_MS = 500;

/** Floor of the key re-check period (half the auth cache TTL), so TTL 0 does not hammer billing. */
const MIN_KEY_RECHECK_MS = 500;

const TERMINAL_STATUSES = new Set(["completed", "failed", "cancelled"]);

const SSE_HEADERS = {
  "Content-Type": "text/event-stream; charset=utf-8",
  "Cache-Control": "no-cache, no-transform",
  "X-Accel-Buffering": "no",
  Connection: "keep-alive",
};

function toWire(e: agentJobsV1.JobEvent): WireJobEvent {
  return {
    sequence: e.sequence,
    type: e.type,
    data: eventData(e),
    created_at: (e.createdAt ?? new Date()).toISOString(),
  };
}

/** The progress stream route; key in Authorization or ?api_key= / ?token=. */
export const streamRoute = defineRoute({
  ...endpoint(
    "GET /v1/chat/{session_id}/stream",
    "streamJob",
    "Progress stream of an async chat job (server-sent events)",
    "chat",
  ),
  description:
    "Events: document_sync, intermediate, proposed_change, proposed_change_batch, final (then usage), error. " +
    "Each event's id is its sequence; reconnect with Last-Event-ID or last_sequence to replay only later ones. " +
    "Comment lines are heartbeats. The stream ends after usage (which follows final) or error; resumed at or after " +
    "the end of a finished job, it sends that job's final + usage (or error) again and ends. A job that is unknown, " +
    "another owner's, or of another session gets an error event `{error}` and the stream ends. When the key is " +
    "revoked, an open stream ends with an error event within the auth cache TTL.",
  queryKeyAuth: true,
  request: { params: SessionPathSchema, query: StreamQuerySchema },
  response: {
    description: "text/event-stream",
    schema: z.string().meta({ description: "A text/event-stream body." }),
    headers: { "Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no" },
  },
  async handle({ params, query }, call) {
    // The spec's answer for an unknown job is the stream's `error` event, which clients read as
    // the end; another owner's job (the agent's NOT_FOUND) and another session's look the same.
    const job = await call.ctx.jobs.getJob({ jobId: query.job_id, compact: true }, call.rpc()).then(
      (r) => r.job,
      (err: unknown) => {
        if (err instanceof RedlineError && err.httpStatus === 404) return undefined;
        throw err;
      },
    );
    if (!job || job.sessionId !== params.session_id) {
      const send = (res: Response) => {
        res.end(`event: error\ndata: ${JSON.stringify({ error: "Job not found" })}\n\n`);
      };
      return { body: "", headers: SSE_HEADERS, send };
    }
    return {
      body: "",
      headers: SSE_HEADERS,
      send: (res) => streamJob(res, call, params.session_id, query.job_id, query.last_sequence),
    };
  },
});

/** The resume cursor: `last_sequence`, else a numeric Last-Event-ID, else 0 (capped to a safe integer). */
function resumeCursor(res: Response, lastSequence: number | undefined): number {
  const header = res.req.get("last-event-id")?.trim();
  const raw = lastSequence ?? (header && /^\d+$/.test(header) ? Number(header) : 0);
  return Math.min(raw, Number.MAX_SAFE_INTEGER);
}

/**
 * Writes one job's events to `res` as server-sent events until the job ends (usage or error),
 * the client leaves, the key is revoked, or the gateway stops (the stream then ends after the
 * event being written, so the client's Last-Event-ID resumes it on another instance with no gap
 * or repeat): replays events after the resume cursor, then follows NATS (or polls the agent)
 * with a heartbeat comment, re-checking the key before every event.
 */
async function streamJob(
  res: Response,
  call: RouteCall,
  sessionId: string,
  jobId: string,
  lastSequence: number | undefined,
): Promise<void> {
  const stream = new JobStream(res, call, sessionId, jobId, resumeCursor(res, lastSequence));
  await stream.run();
}

/** The state of one open progress stream; see streamJob. */
class JobStream {
  private closed = false;
  private finished = false;
  // Once a revocation is announced nothing else goes out, even from a delivery in flight.
  private sealed = false;
  private status = "";
  private responseMode = "full";
  private wake: () => void = () => {};
  /** A NATS reconnect happened since the last fetch: live events may be missing. */
  private missed = false;
  private readonly queue: WireJobEvent[] = [];
  private unsubscribe: () => void = () => {};
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly onGatewayStop = () => this.gatewayStopping();

  constructor(
    private readonly res: Response,
    private readonly call: RouteCall,
    private readonly sessionId: string,
    private readonly jobId: string,
    private cursor: number,
  ) {}

  /** Streams until the end, then clears timers and the subscription and ends the response. */
  async run(): Promise<void> {
    const { openStreams } = this.call.ctx;
    openStreams.count++;
    try {
      await this.open();
      await this.follow();
    } catch (err) {
      // Headers are out: a failure can only be reported in the stream.
      this.call.log.error({ err }, "progress stream failed");
      this.send("error", { error: "The stream failed; reconnect to resume" });
    } finally {
      for (const timer of this.timers) clearInterval(timer);
      this.call.ctx.stopping.removeEventListener("abort", this.onGatewayStop);
      this.unsubscribe();
      openStreams.count--;
      if (!this.closed) this.res.end();
    }
  }

  private async open(): Promise<void> {
    const { ctx } = this.call;
    this.res.flushHeaders();
    this.res.on("close", () => {
      this.closed = true;
      this.wake();
    });
    if (ctx.stopping.aborted) this.gatewayStopping();
    else ctx.stopping.addEventListener("abort", this.onGatewayStop, { once: true });
    this.timers.push(setInterval(() => this.write(": heartbeat\n\n"), ctx.cfg.streamHeartbeatMs ?? HEARTBEAT_MS));
    const recheckMs = Math.max(MIN_KEY_RECHECK_MS, Math.floor(ctx.cfg.authCacheTtlMs / 2));
    this.timers.push(
      setInterval(() => {
        void this.keyStillValid().then((ok) => {
          if (!ok) this.revoked();
        });
      }, recheckMs),
    );
    // Subscribe before the first replay, so nothing published in between is missed.
    try {
      this.unsubscribe = await ctx.jobEvents.subscribe(this.jobId, {
        onEvent: (e) => {
          this.queue.push(e);
          this.wake();
        },
        // NATS came back: what was published meanwhile never reaches us, so follow() refetches.
        onReconnect: () => {
          this.missed = true;
          this.wake();
        },
      });
    } catch (err) {
      this.call.log.warn({ err }, "job events unavailable; the stream polls the agent");
    }
  }

  private get done(): boolean {
    return this.finished || this.closed;
  }

  /** Replays, then delivers events in sequence order until the job or the client is done. */
  private async follow(): Promise<void> {
    let pending: WireJobEvent[] | null = await this.fetchMore();
    while (!this.done && pending) {
      if (pending.length === 0 && TERMINAL_STATUSES.has(this.status)) {
        // Events and status change in one statement, so a terminal job with nothing after the
        // cursor has nothing more to come.
        await this.resendTerminal();
        break;
      }
      await this.deliverInOrder(pending);
      if (this.done) break;
      if (this.queue.length === 0 && !this.missed) await this.sleep();
      if (this.done) break;
      const batch = this.queue.splice(0).filter((e) => e.sequence > this.cursor);
      const contiguous = batch.length > 0 && Math.min(...batch.map((e) => e.sequence)) === this.cursor + 1;
      pending = contiguous && !this.missed ? batch : await this.fetchMore();
    }
  }

  private async deliverInOrder(pending: WireJobEvent[]): Promise<void> {
    for (const e of pending.sort((a, b) => a.sequence - b.sequence)) {
      if (e.sequence <= this.cursor) continue;
      if (e.sequence > this.cursor + 1) break; // a gap: the next fetch fills it
      if (!(await this.keyStillValid())) {
        this.revoked();
        break;
      }
      await this.deliver(e);
      if (this.done) break;
    }
  }

  /** Waits for a NATS event (wake) or the refetch period, whichever comes first. */
  private sleep(): Promise<void> {
    return new Promise<void>((resolve) => {
      const period = this.call.ctx.jobEvents.live ? REFETCH_LIVE_MS * (0.75 + Math.random() / 2) : REFETCH_POLL_MS;
      const timer = setTimeout(resolve, period);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private write(chunk: string): void {
    // A late key re-check may answer after the end; a write then would be an error on `res`.
    if (!this.closed && !this.sealed && !this.res.writableEnded) this.res.write(chunk);
  }

  private send(event: string, data: unknown, id?: number): void {
    this.write(`${id !== undefined ? `id: ${id}\n` : ""}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  // The key is resolved again (from the gateway's auth cache) before every event and on a timer,
  // so a revoked key gets nothing after its cache entry lapses and an idle stream still closes.
  private async keyStillValid(): Promise<boolean> {
    try {
      await recheckKey(this.res);
      return true;
    } catch (err) {
      if (err instanceof RedlineError && err.httpStatus === 401) return false;
      this.call.log.warn({ err }, "re-checking the stream's key failed; keeping the stream");
      return true;
    }
  }

  // The gateway stops: the stream ends (after an event being written, never inside one) with a
  // comment, and an EventSource reconnects, landing on another instance, with Last-Event-ID.
  private gatewayStopping(): void {
    if (this.done) return;
    this.write(": the server is restarting; reconnect with Last-Event-ID to resume\n\n");
    this.finished = true;
    this.wake();
  }

  private revoked(): void {
    if (this.sealed || this.closed) return;
    this.send("error", { error: "The API key was revoked" });
    this.sealed = true;
    this.finished = true;
    this.wake();
  }

  /** Events after the cursor from the agent; null when the stream must end, [] to retry. */
  private async fetchMore(): Promise<WireJobEvent[] | null> {
    this.missed = false;
    try {
      const r = await this.call.ctx.jobs.getJobEvents(
        { jobId: this.jobId, afterSequence: this.cursor },
        this.call.rpc(),
      );
      if (r.sessionId !== this.sessionId) {
        this.send("error", { error: "Job not found in this session" });
        this.finished = true;
        return null;
      }
      this.responseMode = r.responseMode;
      this.status = r.status;
      return r.events.map(toWire);
    } catch (err) {
      if (err instanceof RedlineError && err.httpStatus === 404) {
        // Checked at the start, so this is a job removed by retention while streamed.
        this.send("error", { error: "Job not found" });
        this.finished = true;
        return null;
      }
      this.call.log.warn({ err }, "reading job events failed; retrying");
      return [];
    }
  }

  private async deliver(e: WireJobEvent): Promise<void> {
    this.cursor = e.sequence;
    if (e.type === "final") {
      this.send("final", { result: await this.finalResult(e) }, e.sequence);
      return;
    }
    this.send(e.type, sseEventData(e), e.sequence);
    if (e.type === "usage" || e.type === "error") this.finished = true;
  }

  /** The chat response of a final event as JSON, or null when the job has none. */
  private async finalResult(e: WireJobEvent): Promise<ReturnType<typeof chatResponseToJson> | null> {
    const { ctx } = this.call;
    // The agent puts the result in the event; a job read is only needed for older events.
    const embedded = e.data.result ? agentV1.ChatResponse.fromJSON(e.data.result) : undefined;
    const job = embedded
      ? undefined
      : (await ctx.jobs.getJob({ jobId: this.jobId, compact: false }, this.call.rpc())).job;
    const raw = embedded ?? job?.result;
    const mode = (embedded ? this.responseMode : job?.responseMode) === "compact" ? "compact" : "full";
    return raw ? chatResponseToJson(raw, mode, this.call.principal?.plan ?? "") : null;
  }

  // A client that resumes at or after the last event of a finished job (an EventSource
  // reconnecting after the end) learns the outcome again: the job's final + usage, or its error,
  // with their own ids; then the stream ends instead of waiting for events that never come.
  private async resendTerminal(): Promise<void> {
    const { ctx } = this.call;
    const all = (await ctx.jobs.getJobEvents({ jobId: this.jobId, afterSequence: 0 }, this.call.rpc())).events.map(
      toWire,
    );
    let start = all.length - 1;
    while (start >= 0 && all[start].type !== "final" && all[start].type !== "error") start--;
    if (start < 0) this.send("error", { error: `Job ${this.status}` });
    for (const e of start < 0 ? [] : all.slice(start)) {
      if (!(await this.keyStillValid())) return this.revoked();
      await this.deliver(e);
    }
    this.finished = true;
  }
}
