// GET /v1/chat/{session_id}/stream?job_id=… (unshown-parts.md, Progress stream): server-sent
// events of one job. Stored events are replayed from the agent after `last_sequence` or
// Last-Event-ID, then followed live over NATS (any gateway instance can serve any job); a gap
// or a quiet period is filled from the agent again, so a lost NATS message delays, never drops.
import { type agentJobsV1, agentV1 } from "@redline/grpc-stubs";
import { RedlineError } from "@redline/service-kit";
import type { Response } from "express";
import { z } from "zod";
import type { WireJobEvent } from "../job-events.js";
import { eventData } from "../job-mappers.js";
import { chatResponseToJson } from "../mappers.js";
import { defineRoute, type RouteCall } from "../route-registry.js";
import { ChatSessionPathSchema, StreamQuerySchema } from "../schemas-jobs.js";

/** Default comment heartbeat period (GatewayConfig.streamHeartbeatMs). */
const HEARTBEAT_MS = 15_000;
/** How often the agent is asked again: a safety net with NATS, the mechanism without it. */
const REFETCH_LIVE_MS = 5_000;
const REFETCH_POLL_MS = 500;

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
  method: "get",
  path: "/v1/chat/{session_id}/stream",
  operationId: "streamJob",
  summary: "Progress stream of an async chat job (server-sent events)",
  description:
    "Events: document_sync, intermediate, proposed_change, proposed_change_batch, final (then usage), error. " +
    "Each event's id is its sequence; reconnect with Last-Event-ID or last_sequence to replay only later ones. " +
    "Comment lines are heartbeats. The stream ends after usage (which follows final) or error.",
  tags: ["chat"],
  auth: true,
  queryKeyAuth: true,
  params: ChatSessionPathSchema,
  query: StreamQuerySchema,
  response: {
    description: "text/event-stream",
    schema: z.string().meta({ description: "A text/event-stream body." }),
    headers: { "Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no" },
  },
  async handle({ params, query }, call) {
    return {
      body: "",
      headers: SSE_HEADERS,
      send: (res) => streamJob(res, call, params.session_id, query.job_id, query.last_sequence),
    };
  },
});

async function streamJob(
  res: Response,
  call: RouteCall,
  sessionId: string,
  jobId: string,
  lastSequence: number | undefined,
): Promise<void> {
  const { ctx } = call;
  const header = res.req.get("last-event-id");
  let cursor = lastSequence ?? (header && /^\d+$/.test(header.trim()) ? Number(header.trim()) : 0);
  let closed = false;
  let finished = false;
  let wake: () => void = () => {};
  const queue: WireJobEvent[] = [];
  let responseMode = "full";
  res.flushHeaders();
  res.on("close", () => {
    closed = true;
    wake();
  });
  const write = (chunk: string) => {
    if (!closed) res.write(chunk);
  };
  const send = (event: string, data: unknown, id?: number) =>
    write(`${id !== undefined ? `id: ${id}\n` : ""}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  const heartbeat = setInterval(() => write(": heartbeat\n\n"), ctx.cfg.streamHeartbeatMs ?? HEARTBEAT_MS);

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
      return r.events.map(toWire);
    } catch (err) {
      if (err instanceof RedlineError && err.httpStatus === 404) {
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

  try {
    let pending: WireJobEvent[] | null = await fetchMore();
    while (!closed && !finished && pending) {
      for (const e of pending.sort((a, b) => a.sequence - b.sequence)) {
        if (e.sequence <= cursor) continue;
        if (e.sequence > cursor + 1) break; // a gap: the next fetch fills it
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
      const batch = queue.splice(0).filter((e) => e.sequence > cursor);
      const contiguous = batch.length > 0 && Math.min(...batch.map((e) => e.sequence)) === cursor + 1;
      pending = contiguous ? batch : await fetchMore();
    }
  } finally {
    clearInterval(heartbeat);
    unsubscribe();
    if (!closed) res.end();
  }
}
