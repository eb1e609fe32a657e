// A reader of server-sent events (the gateway's job progress streams), as a client reads them:
// events split on blank lines, comment lines counted, stopped on a condition or a bound.

/** One server-sent event. */
export interface SseEvent {
  id?: string;
  event: string;
  data: Record<string, unknown>;
}

/** A read stream: its response headers, the events, and how many comment lines came. */
export interface SseRead {
  status: number;
  headers: Headers;
  events: SseEvent[];
  comments: number;
  /** True when the server ended the stream (false: we stopped reading at `stopAfter` or the timeout). */
  ended: boolean;
}

/**
 * Reads an SSE response until the server ends it, `stopAfter` returns true for an event, or
 * `timeoutMs` passes (default 20 s). `stack.url` is the gateway's base URL, `path` a gateway path
 * with query.
 */
export async function readSse(
  stack: { url: string },
  path: string,
  opts: {
    headers?: Record<string, string>;
    timeoutMs?: number;
    stopAfter?: (e: SseEvent) => boolean;
    /** Called as each event arrives (e.g. to note when). */
    onEvent?: (e: SseEvent) => void;
  } = {},
): Promise<SseRead> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), opts.timeoutMs ?? 20_000);
  const res = await fetch(`${stack.url}${path}`, { headers: opts.headers, signal: controller.signal });
  const out: SseRead = { status: res.status, headers: res.headers, events: [], comments: 0, ended: false };
  if (!res.body || !(res.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    clearTimeout(timer);
    return out;
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        out.ended = true;
        break;
      }
      buffer += decoder.decode(value, { stream: true });
      let cut = buffer.indexOf("\n\n");
      let stop = false;
      while (cut >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        cut = buffer.indexOf("\n\n");
        const event: SseEvent = { event: "message", data: {} };
        let isComment = true;
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) continue;
          isComment = false;
          const i = line.indexOf(":");
          const field = line.slice(0, i);
          const value = line.slice(i + 1).trimStart();
          if (field === "id") event.id = value;
          else if (field === "event") event.event = value;
          else if (field === "data") event.data = JSON.parse(value) as Record<string, unknown>;
        }
        if (isComment) out.comments++;
        else {
          out.events.push(event);
          opts.onEvent?.(event);
          if (opts.stopAfter?.(event)) stop = true;
        }
      }
      if (stop) break;
    }
  } catch (err) {
    if (!controller.signal.aborted) throw err;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return out;
}
