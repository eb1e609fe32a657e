// The progress stream of an async chat job as an async iterator (unshown-parts.md, Progress
// stream): GET /v1/chat/{session_id}/stream?job_id=…, reconnecting with Last-Event-ID when the
// connection drops, ending after the job's terminal event.
import { errorFromResponse, RedlineApiError } from "./errors.js";
import { readSse, SseParser } from "./sse.js";
import type { ChangeRecord } from "./types.js";

/** One event of the progress stream; `data` is the parsed JSON (the raw text when it is not JSON). */
export interface JobStreamEvent {
  /** The event's id (its sequence), null for events sent without one (an unknown job's `error`). */
  id: string | null;
  /** document_sync, intermediate, proposed_change, proposed_change_batch, final, usage or error. */
  event: string;
  data: unknown;
}

/** Options of streamJob. */
export interface StreamJobOptions {
  /** Resume after this event id (sent as Last-Event-ID): only later events come. */
  lastEventId?: string | null;
  /** The job's session; looked up with GET /v1/jobs/{id} when not given. */
  sessionId?: string;
  /** Stops the stream (the iterator then throws the signal's reason). */
  signal?: AbortSignal;
  /** Consecutive reconnects without a new event before giving up (default 8). */
  maxReconnects?: number;
  /** First reconnect delay in ms, doubled per failed attempt up to 5 s (default 250; the server's `retry:` wins). */
  reconnectDelayMs?: number;
}

/** What streamJobEvents needs from the client: one authenticated GET of the stream. */
export type OpenStream = (
  sessionId: string,
  jobId: string,
  lastEventId: string | null,
  signal?: AbortSignal,
) => Promise<Response>;

const MAX_DELAY_MS = 5000;

/** Ends the stream: `usage` follows `final`; `error` is sent for failed, cancelled and unknown jobs. */
function isTerminal(event: string): boolean {
  return event === "usage" || event === "error";
}

function parseData(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Statuses worth another connection (the gateway restarting, a rate limit); any other 4xx/5xx is final. */
function retryable(status: number): boolean {
  return status === 429 || status === 502 || status === 503 || status === 504;
}

/**
 * The job's events in order. A dropped connection (network error, or the body ending before a
 * terminal event, as when a gateway stops) is reopened with Last-Event-ID set to the last id
 * received, so the gateway replays only later events: no gap and no repeat. Ends after `usage`
 * or `error`, or when the body ends after `final`. Throws RedlineApiError for a non-retryable
 * answer, the last failure after `maxReconnects` fruitless attempts, or the abort reason.
 */
export async function* streamJobEvents(
  open: OpenStream,
  sessionId: string,
  jobId: string,
  opts: StreamJobOptions = {},
): AsyncGenerator<JobStreamEvent> {
  const { signal } = opts;
  const maxReconnects = opts.maxReconnects ?? 8;
  const baseDelay = opts.reconnectDelayMs ?? 250;
  let lastEventId = opts.lastEventId ?? null;
  let sawFinal = false;
  let failures = 0;
  let serverRetryMs: number | null = null;
  let lastFailure: unknown = null;
  for (;;) {
    signal?.throwIfAborted();
    let progressed = false;
    try {
      const response = await open(sessionId, jobId, lastEventId, signal);
      if (!response.ok || !response.body) {
        const error = await errorFromResponse(response);
        if (!retryable(response.status)) throw error;
        lastFailure = error;
      } else {
        const parser = new SseParser();
        for await (const e of readSse(response.body, parser)) {
          progressed = true;
          if (e.id !== null) lastEventId = e.id;
          const event: JobStreamEvent = { id: e.id, event: e.event, data: parseData(e.data) };
          yield event;
          if (isTerminal(e.event)) return;
          if (e.event === "final") sawFinal = true;
        }
        serverRetryMs = parser.retryMs ?? serverRetryMs;
        // A body that ends after `final` without `usage` has nothing more to give.
        if (sawFinal) return;
        lastFailure = new Error(`The progress stream of job ${jobId} ended before its terminal event`);
      }
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (err instanceof RedlineApiError && !retryable(err.status)) throw err;
      lastFailure = err;
    }
    failures = progressed ? 1 : failures + 1;
    if (failures > maxReconnects) throw lastFailure;
    await sleep(serverRetryMs ?? Math.min(MAX_DELAY_MS, baseDelay * 2 ** (failures - 1)), signal);
  }
}

/**
 * The change records an event proposes: one for `proposed_change`, all of a batch for
 * `proposed_change_batch` (whose `content` is JSON text, unshown-parts.md "Wire envelope"), none
 * for other events.
 */
export function proposedChanges(event: JobStreamEvent): ChangeRecord[] {
  if (event.event !== "proposed_change" && event.event !== "proposed_change_batch") return [];
  const data = event.data as { content?: unknown } | null;
  const content = typeof data?.content === "string" ? parseData(data.content) : data?.content;
  if (event.event === "proposed_change") return content && typeof content === "object" ? [content as ChangeRecord] : [];
  const changes = (content as { changes?: unknown } | null)?.changes;
  return Array.isArray(changes) ? (changes as ChangeRecord[]) : [];
}
