// A strict typed client of the Redline wire contract, as a published CLI would be: every JSON
// body goes through a schema of test/support/client-schemas.ts (with its status checked), and the
// progress stream is read event by event with parseStreamEvent, ending only where the spec says.
import type { z } from "zod";
import { endsStream, parseStreamEvent, type StreamEvent, strictParse } from "./client-schemas.js";
import { readSse } from "./jobs.js";
import type { TestStack } from "./stack.js";

/** A parsed answer: the status, headers and the body as the schema typed it. */
export interface TypedAnswer<T> {
  status: number;
  headers: Headers;
  body: T;
}

/** A read of the progress stream: the parsed events and whether the server closed it. */
export interface StreamRead {
  events: StreamEvent[];
  /** The server ended the response (false: the read timed out). */
  ended: boolean;
}

/** The client: one API key against one gateway. */
export class TypedClient {
  constructor(
    private readonly stack: Pick<TestStack, "url">,
    private readonly key: string,
  ) {}

  /**
   * Sends a request and parses the JSON answer with `schema`; fails when the status is not
   * `status`, the body is not JSON, or the body does not match.
   */
  async send<S extends z.ZodType>(
    method: string,
    path: string,
    expect: { status: number | number[]; schema: S },
    body?: unknown,
  ): Promise<TypedAnswer<z.output<S>>> {
    const headers: Record<string, string> = { Authorization: `Bearer ${this.key}` };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const res = await fetch(`${this.stack.url}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const what = `${method} ${path} → ${res.status}`;
    const statuses = Array.isArray(expect.status) ? expect.status : [expect.status];
    if (!statuses.includes(res.status))
      throw new Error(`${what}, expected ${statuses.join("/")}: ${text.slice(0, 500)}`);
    if (!(res.headers.get("content-type") ?? "").startsWith("application/json")) {
      throw new Error(`${what}: content-type ${res.headers.get("content-type")} is not JSON`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error(`${what}: body is not JSON: ${text.slice(0, 200)}`);
    }
    const parsed = strictParse(expect.schema, json, what);
    return { status: res.status, headers: res.headers, body: parsed };
  }

  /** Sends a request whose answer is a file (export); returns status, headers and bytes. */
  async download(path: string, body: unknown): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
    const res = await fetch(`${this.stack.url}${path}`, {
      method: "POST",
      headers: { Authorization: `Bearer ${this.key}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
  }

  /**
   * Follows a job's progress stream (key in the query, as a browser EventSource sends it),
   * parsing every event strictly and handing it to `onEvent`. Reads until the server closes the
   * response or `timeoutMs` passes, then checks the ending as the spec gives it: the server
   * closed only after an event that ends the stream (endsStream), and after it only `usage`.
   */
  async follow(
    sessionId: string,
    jobId: string,
    opts: { onEvent?: (e: StreamEvent) => void; timeoutMs?: number; lastSequence?: number } = {},
  ): Promise<StreamRead> {
    const events: StreamEvent[] = [];
    let endAt = -1;
    const query = `job_id=${encodeURIComponent(jobId)}&api_key=${encodeURIComponent(this.key)}${
      opts.lastSequence !== undefined ? `&last_sequence=${opts.lastSequence}` : ""
    }`;
    const read = await readSse(this.stack, `/v1/chat/${encodeURIComponent(sessionId)}/stream?${query}`, {
      timeoutMs: opts.timeoutMs ?? 30_000,
      onEvent: (raw) => {
        const parsed = parseStreamEvent(raw);
        if (endAt >= 0 && parsed.event !== "usage") {
          throw new Error(`"${parsed.event}" after the stream ended with "${events[endAt].event}"`);
        }
        events.push(parsed);
        if (endAt < 0 && endsStream(raw)) endAt = events.length - 1;
        opts.onEvent?.(parsed);
      },
    });
    if (read.status !== 200) throw new Error(`stream answered ${read.status}`);
    if (read.headers.get("content-type") !== "text/event-stream; charset=utf-8") {
      throw new Error(`stream content-type ${read.headers.get("content-type")}`);
    }
    if (read.ended && endAt < 0) {
      throw new Error(`the server closed the stream without final or error: ${events.map((e) => e.event).join(",")}`);
    }
    return { events, ended: read.ended };
  }
}

/** A promise with its resolve, for "the stream has shown X" hand-offs between a reader and a test. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => {};
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
