import { type agentJobsV1, agentV1 } from "@redline/grpc-stubs";
import { NotFoundError, RedlineError } from "@redline/service-kit";
import type { Response } from "express";
import { z } from "zod";
import { recheckKey } from "../../auth.js";
import type { WireJobEvent } from "../../job-events.js";
import { defineRoute, type RouteCall } from "../../route-registry.js";
import { chatResponseToJson } from "../chat/mappers.js";
import { endpoint } from "../shared/routes.js";
import { SessionPathSchema } from "../shared/schemas.js";
import { eventData } from "./mappers.js";
import { StreamQuerySchema } from "./schemas.js";

/** Default comment heartbeat period (GatewayConfig.streamHeartbeatMs). */
const HEARTBEAT_MS = 15_000;

/** How often the agent is asked again: a safety net with NATS, the mechanism without it. */
const REFETCH_LIVE_MS = 5_000;

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
    "the end of a finished job, it sends that job's final + usage (or error) again and ends. 404 `{detail}` before " +
    "the stream starts when the job is unknown, another owner's, or of another session. When the key is revoked, " +
    "an open stream ends with an error event within the auth cache TTL.",
  queryKeyAuth: true,
  params: SessionPathSchema,
  query: StreamQuerySchema,
  response: {
    description: "text/event-stream",
    schema: z.string().meta({ description: "A text/event-stream body." }),
    headers: { "Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no" },
  },
  errors: [404],
  async handle({ params, query }, call) {
    // Checked before any byte is sent, so a wrong job is a plain JSON 404 (the agent's NOT_FOUND
    // covers unknown and other owners' jobs) and not a 200 an EventSource would keep reopening.
    const { job } = await call.ctx.jobs.getJob({ jobId: query.job_id, compact: true }, call.rpc());
    if (!job || job.sessionId !== params.session_id) throw new NotFoundError("Job not found in this session");
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

async function streamJob(
  res: Response,
  call: RouteCall,
  sessionId: string,
  jobId: string,
  lastSequence: number | undefined,
): Promise<void> {
  const { ctx } = call;
  let cursor = resumeCursor(res, lastSequence);
  let closed = false;
  let finished = false;
  // Once a revocation is announced nothing else goes out, even from a delivery in flight.
  let sealed = false;
  let status = "";
  let wake: () => void = () => {};
  const queue: WireJobEvent[] = [];
  let responseMode = "full";
  res.flushHeaders();
  res.on("close", () => {
    closed = true;
    wake();
  });
  const write = (chunk: string) => {
    // A late key re-check may answer after the end; a write then would be an error on `res`.
    if (!closed && !sealed && !res.writableEnded) res.write(chunk);
  };
  const send = (event: string, data: unknown, id?: number) =>
    write(`${id !== undefined ? `id: ${id}\n` : ""}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  const heartbeat = setInterval(() => write(": heartbeat\n\n"), ctx.cfg.streamHeartbeatMs ?? HEARTBEAT_MS);

  // The key is resolved again (from the gateway's auth cache) before every event and on a timer,
  // so a revoked key gets nothing after its cache entry lapses and an idle stream still closes.
  const keyStillValid = async (): Promise<boolean> => {
    try {
      await recheckKey(res);
      return true;
    } catch (err) {
      if (err instanceof RedlineError && err.httpStatus === 401) return false;
      call.log.warn({ err }, "re-checking the stream's key failed; keeping the stream");
      return true;
    }
  };
  const revoked = () => {
    if (sealed || closed) return;
    send("error", { error: "The API key was revoked" });
    sealed = true;
    finished = true;
    wake();
  };
  const recheckMs = Math.max(MIN_KEY_RECHECK_MS, Math.floor(ctx.cfg.authCacheTtlMs / 2));
  const keyTimer = setInterval(() => {
    void keyStillValid().then((ok) => {
      if (!ok) revoked();
    });
  }, recheckMs);

  // Subscribe before the first replay, so nothing published in between is missed.
  let unsubscribe: () => void = () => {};
  try {
    unsubscribe = await ctx.jobEvents.subscribe(jobId, (e) => {
      queue.push(e);
      wake();
    });
  } catch (err) {
    call.log.warn({ err }, "job events unavailable; the stream polls the agent");
  }

  const fetchMore = async (): Promise<WireJobEvent[] | null> => {
    try {
      const r = await ctx.jobs.getJobEvents({ jobId, afterSequence: cursor }, call.rpc());
      if (r.sessionId !== sessionId) {
        send("error", { error: "Job not found in this session" });
        finished = true;
        return null;
      }
      responseMode = r.responseMode;
      status = r.status;
      return r.events.map(toWire);
    } catch (err) {
      if (err instanceof RedlineError && err.httpStatus === 404) {
        // Checked at the start, so this is a job removed by retention while streamed.
        send("error", { error: "Job not found" });
        finished = true;
        return null;
      }
      call.log.warn({ err }, "reading job events failed; retrying");
      return [];
    }
  };

  const deliver = async (e: WireJobEvent) => {
    cursor = e.sequence;
    if (e.type === "final") {
      // The agent puts the result in the event; a job read is only needed for older events.
      const embedded = e.data.result ? agentV1.ChatResponse.fromJSON(e.data.result) : undefined;
      const job = embedded ? undefined : (await ctx.jobs.getJob({ jobId, compact: false }, call.rpc())).job;
      const raw = embedded ?? job?.result;
      const mode = (embedded ? responseMode : job?.responseMode) === "compact" ? "compact" : "full";
      const result = raw ? chatResponseToJson(raw, mode, call.principal?.plan ?? "") : null;
      send("final", { result }, e.sequence);
      return;
    }
    if (e.type === "intermediate") {
      send(
        "intermediate",
        { type: "intermediate", ...e.data, sequence: e.sequence, timestamp: e.created_at },
        e.sequence,
      );
      return;
    }
    send(e.type, e.data, e.sequence);
    if (e.type === "usage" || e.type === "error") finished = true;
  };

  // A client that resumes at or after the last event of a finished job (an EventSource
  // reconnecting after the end) learns the outcome again: the job's final + usage, or its error,
  // with their own ids; then the stream ends instead of waiting for events that never come.
  const resendTerminal = async () => {
    const all = (await ctx.jobs.getJobEvents({ jobId, afterSequence: 0 }, call.rpc())).events.map(toWire);
    let start = all.length - 1;
    while (start >= 0 && all[start].type !== "final" && all[start].type !== "error") start--;
    if (start < 0) send("error", { error: `Job ${status}` });
    for (const e of start < 0 ? [] : all.slice(start)) {
      if (!(await keyStillValid())) return revoked();
      await deliver(e);
    }
    finished = true;
  };

  try {
    let pending: WireJobEvent[] | null = await fetchMore();
    while (!closed && !finished && pending) {
      if (pending.length === 0 && TERMINAL_STATUSES.has(status)) {
        // Events and status change in one statement, so a terminal job with nothing after the
        // cursor has nothing more to come.
        await resendTerminal();
        break;
      }
      for (const e of pending.sort((a, b) => a.sequence - b.sequence)) {
        if (e.sequence <= cursor) continue;
        if (e.sequence > cursor + 1) break; // a gap: the next fetch fills it
        if (!(await keyStillValid())) {
          revoked();
          break;
        }
        await deliver(e);
        if (finished || closed) break;
      }
      if (finished || closed) break;
      if (queue.length === 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, ctx.jobEvents.live ? REFETCH_LIVE_MS : REFETCH_POLL_MS);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      if (finished || closed) break;
      const batch = queue.splice(0).filter((e) => e.sequence > cursor);
      const contiguous = batch.length > 0 && Math.min(...batch.map((e) => e.sequence)) === cursor + 1;
      pending = contiguous ? batch : await fetchMore();
    }
  } catch (err) {
    // Headers are out: a failure can only be reported in the stream.
    call.log.error({ err }, "progress stream failed");
    send("error", { error: "The stream failed; reconnect to resume" });
  } finally {
    clearInterval(heartbeat);
    clearInterval(keyTimer);
    unsubscribe();
    if (!closed) res.end();
  }
}
