// A server-sent events parser for the progress stream (HTML Living Standard, "Parsing an event
// stream"): UTF-8 with an optional BOM, lines ended by CRLF, LF or CR (also split across chunks),
// `:` comments (the gateway's heartbeats), the fields event/data/id/retry, and an event dispatched
// at each blank line. No library: eventsource-parser is in the store only as another package's
// dependency, and this package may not add one.

/** One dispatched event. */
export interface SseEvent {
  /** The event's `id:` line, or null when the event had none. */
  id: string | null;
  /** The `event:` name; `message` when absent. */
  event: string;
  /** The `data:` lines joined by "\n". */
  data: string;
}

/** Incremental parser: feed it decoded text in any chunking, get the complete events back. */
export class SseParser {
  private buffer = "";
  /** The previous chunk ended with CR: a LF starting the next one belongs to that line end. */
  private pendingCr = false;
  private started = false;
  private event = "";
  private data: string[] = [];
  private id: string | null = null;
  /** The stream's last event id (kept across events, as EventSource keeps it). */
  lastEventId: string | null = null;
  /** The last `retry:` value in ms, or null. */
  retryMs: number | null = null;

  /** Parses `text` and returns the events it completed. */
  feed(text: string): SseEvent[] {
    let chunk = text;
    if (!this.started && chunk.length > 0) {
      this.started = true;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    if (this.pendingCr && chunk.startsWith("\n")) chunk = chunk.slice(1);
    this.pendingCr = false;
    this.buffer += chunk;
    const out: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const ch = this.buffer[i];
      if (ch !== "\n" && ch !== "\r") continue;
      const line = this.buffer.slice(start, i);
      if (ch === "\r") {
        if (i + 1 < this.buffer.length) {
          if (this.buffer[i + 1] === "\n") i++;
        } else {
          this.pendingCr = true;
        }
      }
      start = i + 1;
      const event = this.line(line);
      if (event) out.push(event);
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  private line(line: string): SseEvent | null {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "event":
        this.event = value;
        break;
      case "data":
        this.data.push(value);
        break;
      case "id":
        if (!value.includes("\0")) {
          this.id = value;
          this.lastEventId = value;
        }
        break;
      case "retry":
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
      default:
        // Unknown fields are ignored.
        break;
    }
    return null;
  }

  private dispatch(): SseEvent | null {
    const data = this.data;
    const event: SseEvent = { id: this.id, event: this.event || "message", data: data.join("\n") };
    this.event = "";
    this.data = [];
    this.id = null;
    // An event with no data line is not dispatched (its id still counts for a reconnect).
    return data.length > 0 ? event : null;
  }
}

/**
 * The events of an event-stream body, in order, until the body ends; an event left incomplete by
 * the end (no blank line yet) is dropped, as EventSource drops it. `parser` keeps the last id.
 */
export async function* readSse(body: ReadableStream<Uint8Array>, parser = new SseParser()): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder("utf-8");
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      yield* parser.feed(decoder.decode(value, { stream: true }));
    }
    yield* parser.feed(decoder.decode());
  } finally {
    // Stops the download when the consumer leaves early (break, return, throw).
    await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
