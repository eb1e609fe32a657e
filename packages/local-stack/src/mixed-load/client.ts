// What every scenario of the mixed load shares: a client's state, and the bounded, recorded
// gateway call (LoadIo) through which each scenario sends its requests.
import type { Ledger, MixedLoadOptions, RequestKind, RequestRecord } from "./model.js";

/** A client's own documents: a session per kind, so the kinds never wait on each other's turns. */
export interface ClientState {
  index: number;
  key: string;
  chat: { sessionId: string; documentId: string; word: number };
  save: { sessionId: string; slotId: string; documentId: string; html: string; n: number };
  jobSession: string;
  docEventsCursor: number;
  uploads: number;
  /** A billable request whose outcome the client never learned (timeout, network). */
  unknownBillable: boolean;
  loopAt: number;
}

/** An answer read within the bound: status, headers, body text. */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** No answer: the bound passed, or the connection failed. */
export type NoAnswer = { failure: "timeout" | "network" };

/** A send's error as NoAnswer. */
export function noAnswer(err: unknown): NoAnswer {
  const name = (err as Error)?.name;
  return { failure: name === "TimeoutError" || name === "AbortError" ? "timeout" : "network" };
}

/** The answer, or null when none came. */
export function answered(a: Answer | NoAnswer): Answer | null {
  return "failure" in a ? null : a;
}

/** Thrown by a step that could not go on (its request was recorded). */
export class StepFailed extends Error {}

/** The load's options with their defaults applied. */
export type LoadSettings = Required<Omit<MixedLoadOptions, "onRecord">> & Pick<MixedLoadOptions, "onRecord">;

/** One scenario: a request (or a short sequence) a client sends, recorded and, when acknowledged, put in the ledger. */
export type Scenario = (io: LoadIo, c: ClientState) => Promise<void>;

/** The gateway as the load's clients see it: every call bounded, every request recorded. */
export class LoadIo {
  readonly records: RequestRecord[] = [];
  readonly ledger: Ledger = { saves: [], syncChats: [], jobs: [], uploads: [] };

  constructor(readonly opts: LoadSettings) {}

  /** Sends one request and records it; null when no answer came (timeout or network). */
  async request(
    c: ClientState,
    kind: RequestKind,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<Answer | null> {
    const startedAt = Date.now();
    const a = await this.send(c.key, method, path, body).catch(noAnswer);
    this.record(this.recordOf(c, kind, startedAt, a));
    return answered(a);
  }

  /** The record of a request of `kind` sent at `startedAt` (epoch ms) that ended now with `outcome`. */
  recordOf(c: ClientState, kind: RequestKind, startedAt: number, outcome: Answer | NoAnswer): RequestRecord {
    const endedAt = Date.now();
    const a = answered(outcome);
    let detail: string | null = null;
    let jsonBody = false;
    const contentType = a?.headers.get("content-type") ?? null;
    if (a && contentType?.startsWith("application/json")) {
      try {
        const parsed = JSON.parse(a.text) as { detail?: unknown };
        jsonBody = true;
        if (typeof parsed.detail === "string") detail = parsed.detail;
      } catch {
        jsonBody = false;
      }
    }
    const status = "failure" in outcome ? outcome.failure : outcome.status;
    return {
      kind,
      client: c.index,
      startedAt,
      endedAt,
      latencyMs: endedAt - startedAt,
      status,
      acknowledged: typeof status === "number" && status >= 200 && status < 300,
      retryAfter: a && (a.status < 200 || a.status >= 300) ? a.headers.get("retry-after") : null,
      contentType,
      detail,
      jsonBody,
    };
  }

  record(r: RequestRecord): void {
    this.records.push(r);
    this.opts.onRecord?.(r);
  }

  /** A gateway call with the client's key, bounded by requestTimeoutMs (body: JSON, or FormData as is). */
  send(key: string, method: string, path: string, body?: unknown): Promise<Answer> {
    const headers: Record<string, string> = { Authorization: `Bearer ${key}` };
    let payload: string | FormData | undefined;
    if (body instanceof FormData) payload = body;
    else if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      payload = JSON.stringify(body);
    }
    return this.fetchBounded(`${this.opts.url}${path}`, { method, headers, body: payload });
  }

  /** fetch of any URL (the gateway, a pre-signed object store URL) bounded by requestTimeoutMs. */
  async fetchBounded(url: string, init: RequestInit): Promise<Answer> {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(this.opts.requestTimeoutMs) });
    return { status: res.status, headers: res.headers, text: await res.text() };
  }
}
