// async_chat: an async chat job on a document sent with it, then its SSE progress stream read
// to `final` (recorded as a request of kind "stream").
import { readSse, type SseEvent } from "../../sse.js";
import type { ClientState, LoadIo } from "../client.js";
import type { RequestRecord } from "../model.js";

/** POST /v1/chat/async, then the job's stream; the job goes into the ledger once created. */
export async function asyncChat(io: LoadIo, c: ClientState): Promise<void> {
  const a = await io.request(c, "async_chat", "POST", "/v1/chat/async", {
    message: `replace "Start" with "Begun by client ${c.index}"`,
    session_id: c.jobSession,
    document_html: `<h1>Jobs ${c.index}</h1><p>Start.</p>`,
  });
  if (!a) {
    c.unknownBillable = true;
    return;
  }
  if (a.status < 200 || a.status >= 300) return;
  const body = JSON.parse(a.text) as { job_id: string; session_id: string };
  const entry = { client: c.index, jobId: body.job_id, sessionId: body.session_id, streamedFinal: false };
  io.ledger.jobs.push(entry);
  entry.streamedFinal = await stream(io, c, body.session_id, body.job_id);
}

/** Reads the job's SSE stream until `final` (or `error`), within streamTimeoutMs; records it as kind "stream". */
async function stream(io: LoadIo, c: ClientState, sessionId: string, jobId: string): Promise<boolean> {
  const startedAt = Date.now();
  let ending: SseEvent | undefined;
  let status: RequestRecord["status"];
  let contentType: string | null = null;
  try {
    const read = await readSse(
      { url: io.opts.url },
      `/v1/chat/${encodeURIComponent(sessionId)}/stream?job_id=${encodeURIComponent(jobId)}&api_key=${encodeURIComponent(c.key)}`,
      {
        timeoutMs: io.opts.streamTimeoutMs,
        stopAfter: (e) => e.event === "final" || e.event === "error",
        onEvent: (e) => {
          if (e.event === "final" || e.event === "error") ending = e;
        },
      },
    );
    contentType = read.headers.get("content-type");
    status = ending ? read.status : read.status === 200 ? "timeout" : read.status;
  } catch {
    status = Date.now() - startedAt >= io.opts.streamTimeoutMs ? "timeout" : "network";
  }
  const final = ending?.event === "final";
  io.record({
    kind: "stream",
    client: c.index,
    startedAt,
    endedAt: Date.now(),
    latencyMs: Date.now() - startedAt,
    status,
    acknowledged: final && status === 200,
    retryAfter: null,
    contentType,
    detail: ending && !final ? String(ending.data.detail ?? ending.data.error ?? "") : null,
    jsonBody: false,
  });
  return final;
}
