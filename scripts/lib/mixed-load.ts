// The mixed load of issue #10: N virtual clients against a gateway, each looping over the kinds
// of request a real client sends (sync chat on a small stored document through the offline
// engine, async chat with its SSE stream read to `final`, saves, doc-event polls, uploads,
// exports) at a bounded rate. Every request is recorded (kind, status, latency, acknowledged),
// every acknowledged write goes into a ledger, and verify() checks afterwards that each one is
// there, that every job reached a terminal state and that billing charged each turn once.
// Fault windows are marked so figures can be given per fault (tests, `pnpm bench q`, soak).
import { setTimeout as sleep } from "node:timers/promises";
import { readSse, type SseEvent } from "../../test/support/jobs.js";

/** The kinds of request a virtual client sends. */
export const REQUEST_KINDS = [
  "sync_chat",
  "async_chat",
  "stream",
  "save",
  "doc_events",
  "upload",
  "presigned_upload",
  "export",
] as const;
export type RequestKind = (typeof REQUEST_KINDS)[number];

/** The kinds a client loops over (`stream` is sent by async_chat, not on its own). */
export type LoopKind = Exclude<RequestKind, "stream">;

/** What the default loop sends: every kind but the optional export. */
export const DEFAULT_LOOP: readonly LoopKind[] = [
  "sync_chat",
  "save",
  "doc_events",
  "async_chat",
  "save",
  "doc_events",
  "upload",
  "presigned_upload",
];

/** One request as the client saw it. */
export interface RequestRecord {
  kind: RequestKind;
  /** Index of the virtual client. */
  client: number;
  /** Epoch ms when the request was sent, and when its answer (or failure) came. */
  startedAt: number;
  endedAt: number;
  latencyMs: number;
  /** HTTP status, or "timeout" (no answer within the bound) / "network" (connection refused, reset). */
  status: number | "timeout" | "network";
  /** A 2xx: the server said it did it. */
  acknowledged: boolean;
  /** Retry-After of a non-2xx answer (null when absent). */
  retryAfter: string | null;
  /** Content-Type of the answer. */
  contentType: string | null;
  /** `detail` of an error body, when it was JSON with one. */
  detail: string | null;
  /** The body was JSON (every error must be). */
  jsonBody: boolean;
}

/** Acknowledged writes, to check after the load. */
export interface Ledger {
  /** 2xx saves: the version the save created and the marker its HTML carried. */
  saves: { client: number; documentId: string; versionId: string; marker: string; at: number }[];
  /** 2xx sync chats that changed the document (version) and what each charged. */
  syncChats: { client: number; documentId: string; versionId: string | null; opsCharged: number }[];
  /** 2xx async chats: the job ids created. */
  jobs: { client: number; jobId: string; sessionId: string; streamedFinal: boolean }[];
  /** 2xx uploads (multipart and pre-signed): the durable document and the marker in its text. */
  uploads: { client: number; kind: "upload" | "presigned_upload"; documentId: string; marker: string }[];
}

/** Latency and failure figures of one kind (or all kinds) over a span of time. */
export interface KindStats {
  count: number;
  acknowledged: number;
  failed: number;
  p50Ms: number;
  p99Ms: number;
  /** The longest a client waited for an answer (ms), failed or not. */
  longestWaitMs: number;
  /** Non-2xx answers by status ("timeout", "network" included). */
  errorsByStatus: Record<string, number>;
}

/** A marked span (a fault): when it began, when the dependency came back, when it was over. */
export interface FaultWindow {
  name: string;
  startedAt: number;
  /** When the dependency was back (set by restored()); null while it is down. */
  restoredAt: number | null;
  /** When the window was closed (end()); null while open. */
  endedAt: number | null;
  /**
   * After restored(): the first moment from which every request of the window succeeded, minus
   * restoredAt (ms) — how long clients still saw failures. null while unknown.
   */
  recoveryMs: number | null;
}

/** Handle of an open fault window. */
export interface FaultMark {
  /** The dependency is back: recovery is measured from now. */
  restored(): void;
  /** Closes the window. */
  end(): FaultWindow;
  window: FaultWindow;
}

/** What verify() found. */
export interface VerifyReport {
  /** Acknowledged writes missing, jobs not terminal, double charges: each a sentence. */
  problems: string[];
  /** Counts checked. */
  checked: { saves: number; syncChats: number; jobs: number; uploads: number; keys: number };
  /** Keys whose billing could not be checked exactly (a billable request's outcome was unknown). */
  billingUnverifiable: number;
  /** Job ids by terminal status. */
  jobStatuses: Record<string, number>;
}

export interface MixedLoadOptions {
  /** Gateway base URL. */
  url: string;
  /** One API key per virtual client (each client's billing is checked on its own key). */
  keys: string[];
  /** What each client loops over (default DEFAULT_LOOP). */
  loop?: readonly LoopKind[];
  /** At most this many requests a second per client (default 4). */
  ratePerClient?: number;
  /** Bound of one request; a longer wait is recorded as "timeout" (default 20 s). */
  requestTimeoutMs?: number;
  /** Bound of one SSE stream read to final (default 30 s). */
  streamTimeoutMs?: number;
  /** Called on each record as it is made (progress printing). */
  onRecord?: (r: RequestRecord) => void;
}

/** A client's own documents: a session per kind, so the kinds never wait on each other's turns. */
interface ClientState {
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

/** Words the chat document cycles through (`replace "w_i" with "w_i+1"`). */
const CHAT_WORDS = ["amber", "birch", "cedar", "delta", "ember", "fjord"];

/** The percentile q of sorted `values` (0 when empty). */
function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** Figures of `records`. */
export function statsOf(records: readonly RequestRecord[]): KindStats {
  const latencies = records.map((r) => r.latencyMs).sort((a, b) => a - b);
  const errorsByStatus: Record<string, number> = {};
  for (const r of records) if (!r.acknowledged) errorsByStatus[r.status] = (errorsByStatus[r.status] ?? 0) + 1;
  const acknowledged = records.filter((r) => r.acknowledged).length;
  return {
    count: records.length,
    acknowledged,
    failed: records.length - acknowledged,
    p50Ms: Math.round(quantile(latencies, 0.5)),
    p99Ms: Math.round(quantile(latencies, 0.99)),
    longestWaitMs: Math.round(latencies.at(-1) ?? 0),
    errorsByStatus,
  };
}

/** An answer read within the bound: status, headers, body text. */
interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** No answer: the bound passed, or the connection failed. */
type NoAnswer = { failure: "timeout" | "network" };

/** A send's error as NoAnswer. */
function noAnswer(err: unknown): NoAnswer {
  const name = (err as Error)?.name;
  return { failure: name === "TimeoutError" || name === "AbortError" ? "timeout" : "network" };
}

/** The answer, or null when none came. */
function answered(a: Answer | NoAnswer): Answer | null {
  return "failure" in a ? null : a;
}

/** Thrown by a step that could not go on (its request was recorded). */
class StepFailed extends Error {}

/**
 * The load: `setup()` gives every client its documents (must succeed), `start()` runs the
 * loops until `stop()`; `records`, `ledger` and `faults` are read meanwhile or afterwards.
 */
export class MixedLoad {
  readonly records: RequestRecord[] = [];
  readonly ledger: Ledger = { saves: [], syncChats: [], jobs: [], uploads: [] };
  readonly faults: FaultWindow[] = [];
  private clients: ClientState[] = [];
  private running: Promise<void>[] = [];
  private stopping = false;
  private readonly opts: Required<Omit<MixedLoadOptions, "onRecord">> & Pick<MixedLoadOptions, "onRecord">;

  constructor(opts: MixedLoadOptions) {
    this.opts = {
      loop: DEFAULT_LOOP,
      ratePerClient: 4,
      requestTimeoutMs: 20_000,
      streamTimeoutMs: 30_000,
      // An option given as undefined keeps its default.
      ...Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)),
      url: opts.url,
      keys: opts.keys,
    };
  }

  /** Creates each client's sessions and documents (a chat document, a saved document). Throws on any failure. */
  async setup(): Promise<void> {
    this.clients = await Promise.all(
      this.opts.keys.map(async (key, index) => {
        const must = async (method: string, path: string, body?: unknown) => {
          const a = await this.send(key, method, path, body);
          if (a.status < 200 || a.status >= 300) throw new Error(`setup ${method} ${path}: ${a.status} ${a.text}`);
          return JSON.parse(a.text) as Record<string, unknown>;
        };
        // The chat document: loaded through a sync chat, as a client opens a file in chat.
        const chatHtml = `<h1>Notes ${index}</h1><p>The tree is ${CHAT_WORDS[0]}.</p><p>Second line.</p>`;
        const first = await must("POST", "/v1/chat", {
          message: `replace "Second line" with "Second line of client ${index}"`,
          document_html: chatHtml,
        });
        const changes = first.document_changes as { document_id: string } | undefined;
        if (!changes) throw new Error(`setup chat made no document: ${JSON.stringify(first)}`);
        this.setupOps.set(index, (first.usage as { ops_charged: number }).ops_charged);
        // The saved document: a blank tab saved.
        const init = await must("POST", "/v1/sessions/init", {});
        const sid = init.session_id as string;
        const blank = await must("POST", `/v1/sessions/${sid}/documents/blank`);
        const slot = (blank.document as { document_id: string }).document_id;
        const saved = await must("POST", `/v1/sessions/${sid}/documents/${slot}/save`, {
          html: `<h1>Saves ${index}</h1><p>marker c${index}-s0</p><p>Fixed text.</p>`,
        });
        const jobs = await must("POST", "/v1/sessions/init", {});
        return {
          index,
          key,
          chat: { sessionId: first.session_id as string, documentId: changes.document_id, word: 0 },
          save: {
            sessionId: sid,
            slotId: slot,
            documentId: saved.durable_document_id as string,
            html: saved.html as string,
            n: 0,
          },
          jobSession: jobs.session_id as string,
          docEventsCursor: 0,
          uploads: 0,
          unknownBillable: false,
          loopAt: index, // clients start at different kinds
        };
      }),
    );
  }

  /** Starts every client's loop (after setup()). */
  start(): void {
    if (this.clients.length === 0) throw new Error("MixedLoad.start before setup");
    this.stopping = false;
    this.running = this.clients.map((c) => this.loop(c));
  }

  /** Stops the loops; resolves when every client's request in flight has ended (each is bounded). */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.running);
  }

  /** Marks the start of a fault named `name`; restored() and end() close it. */
  markFault(name: string): FaultMark {
    const window: FaultWindow = { name, startedAt: Date.now(), restoredAt: null, endedAt: null, recoveryMs: null };
    this.faults.push(window);
    return {
      window,
      restored: () => {
        window.restoredAt = Date.now();
      },
      end: () => {
        window.endedAt = Date.now();
        window.recoveryMs = this.recoveryOf(window);
        return window;
      },
    };
  }

  /** Records sent while `window` was open (or from its start on, while it is). */
  recordsIn(window: Pick<FaultWindow, "startedAt" | "endedAt">, kinds?: readonly RequestKind[]): RequestRecord[] {
    const end = window.endedAt ?? Number.POSITIVE_INFINITY;
    return this.records.filter(
      (r) => r.endedAt >= window.startedAt && r.startedAt <= end && (!kinds || kinds.includes(r.kind)),
    );
  }

  /** Figures by kind (and "all") of the records in `window` (all records when absent). */
  stats(window?: Pick<FaultWindow, "startedAt" | "endedAt">): Record<RequestKind | "all", KindStats> {
    const records = window ? this.recordsIn(window) : this.records;
    const out = { all: statsOf(records) } as Record<RequestKind | "all", KindStats>;
    for (const kind of REQUEST_KINDS) out[kind] = statsOf(records.filter((r) => r.kind === kind));
    return out;
  }

  /**
   * ms from restoredAt until the start of the first request after which every request sent in the
   * window succeeded (0 when none failed after restoredAt); null when not restored or never clean.
   */
  private recoveryOf(window: FaultWindow): number | null {
    if (window.restoredAt === null) return null;
    const after = this.recordsIn(window)
      .filter((r) => r.kind !== "stream")
      .sort((a, b) => a.startedAt - b.startedAt);
    let lastFailure = -1;
    after.forEach((r, i) => {
      if (!r.acknowledged) lastFailure = i;
    });
    if (lastFailure < 0) return 0;
    const firstClean = after[lastFailure + 1];
    if (!firstClean) return null;
    return Math.max(0, firstClean.startedAt - window.restoredAt);
  }

  /**
   * Checks the ledger against the server (bounded: each call within the request bound, jobs
   * polled for `jobTimeoutMs`): every acknowledged save's version is in its document's history
   * and the document holds the last acknowledged (or a later attempted) save; every uploaded
   * document is there with its text; every job reached a terminal state; each key's monthly
   * usage equals what its acknowledged turns charged (once each).
   */
  async verify(opts: { jobTimeoutMs?: number } = {}): Promise<VerifyReport> {
    const problems: string[] = [];
    const jobStatuses: Record<string, number> = {};
    const deadline = Date.now() + (opts.jobTimeoutMs ?? 60_000);
    let billingUnverifiable = 0;
    const json = async (key: string, path: string) => {
      const a = await this.send(key, "GET", path);
      return { status: a.status, body: (a.text ? JSON.parse(a.text) : {}) as Record<string, unknown> };
    };

    for (const c of this.clients) {
      // Saves: every acknowledged version is in the history; the head holds the last write.
      const saves = this.ledger.saves.filter((s) => s.client === c.index);
      if (saves.length > 0) {
        const versions = await json(c.key, `/v1/documents/${c.save.documentId}/versions?limit=200`);
        const ids = new Set(
          ((versions.body.versions as { version_id: string }[] | undefined) ?? []).map((v) => v.version_id),
        );
        const total = (versions.body.total as number | undefined) ?? ids.size;
        const missing = saves.filter((s) => !ids.has(s.versionId));
        // Over 200 versions only the newest are listed: older acknowledged ones are checked one by one.
        for (const s of missing) {
          const one =
            total > ids.size ? await json(c.key, `/v1/documents/${c.save.documentId}/versions/${s.versionId}`) : null;
          if (one?.status !== 200)
            problems.push(
              `client ${c.index}: acknowledged save ${s.marker} (version ${s.versionId}) is not in the history`,
            );
        }
        const head = await json(c.key, `/v1/documents/${c.save.documentId}?include_html=true`);
        const html = String(head.body.html ?? "");
        const last = saves.reduce((a, b) => (b.at > a.at ? b : a));
        const lastN = Number(last.marker.split("-s")[1]);
        const m = /marker c\d+-s(\d+)/.exec(html);
        if (!m || Number(m[1]) < lastN)
          problems.push(
            `client ${c.index}: document holds ${m?.[0] ?? "no marker"}, last acknowledged save was ${last.marker}`,
          );
      }
      // Sync chats: each acknowledged change's version is in the chat document's history.
      const chats = this.ledger.syncChats.filter((s) => s.client === c.index && s.versionId);
      if (chats.length > 0) {
        const versions = await json(c.key, `/v1/documents/${c.chat.documentId}/versions?limit=200`);
        const ids = new Set(
          ((versions.body.versions as { version_id: string }[] | undefined) ?? []).map((v) => v.version_id),
        );
        for (const s of chats) {
          if (ids.has(s.versionId as string)) continue;
          const one = await json(c.key, `/v1/documents/${c.chat.documentId}/versions/${s.versionId}`);
          if (one.status !== 200)
            problems.push(`client ${c.index}: acknowledged chat edit (version ${s.versionId}) is not in the history`);
        }
      }
      // Uploads: each acknowledged document is there with its text.
      for (const u of this.ledger.uploads.filter((x) => x.client === c.index)) {
        const doc = await json(c.key, `/v1/documents/${u.documentId}?include_html=true`);
        if (doc.status !== 200 || !String(doc.body.html ?? "").includes(u.marker))
          problems.push(
            `client ${c.index}: acknowledged ${u.kind} ${u.marker} → ${doc.status}, text ${doc.status === 200 ? "missing" : "unread"}`,
          );
      }
      // Jobs: terminal, and what each completed one charged.
      let jobOps = 0;
      for (const j of this.ledger.jobs.filter((x) => x.client === c.index)) {
        let job: Record<string, unknown> | null = null;
        for (;;) {
          const got = await json(c.key, `/v1/jobs/${j.jobId}`).catch(() => null);
          if (got?.status === 200 && ["completed", "failed", "cancelled"].includes(String(got.body.status))) {
            job = got.body;
            break;
          }
          if (Date.now() > deadline) {
            problems.push(
              `client ${c.index}: job ${j.jobId} not terminal (last: ${got ? `${got.status} ${got.body.status}` : "no answer"})`,
            );
            break;
          }
          await sleep(250);
        }
        if (!job) continue;
        jobStatuses[String(job.status)] = (jobStatuses[String(job.status)] ?? 0) + 1;
        const usage = (job.result as { usage?: { ops_charged?: number } } | undefined)?.usage;
        jobOps += usage?.ops_charged ?? 0;
      }
      // Billing: the month's operations are the sum of what the acknowledged turns charged.
      const syncOps = this.ledger.syncChats
        .filter((s) => s.client === c.index)
        .reduce((sum, s) => sum + s.opsCharged, 0);
      const setupOps = this.setupOps.get(c.index) ?? 0;
      const usage = await json(c.key, "/v1/usage");
      const used = Number(usage.body.monthly_used);
      const expected = syncOps + setupOps + jobOps;
      if (usage.status !== 200) problems.push(`client ${c.index}: GET /v1/usage → ${usage.status}`);
      else if (used !== expected) {
        if (c.unknownBillable) billingUnverifiable++;
        else problems.push(`client ${c.index}: monthly_used ${used}, the acknowledged turns charged ${expected}`);
      }
    }
    return {
      problems,
      checked: {
        saves: this.ledger.saves.length,
        syncChats: this.ledger.syncChats.length,
        jobs: this.ledger.jobs.length,
        uploads: this.ledger.uploads.length,
        keys: this.clients.length,
      },
      billingUnverifiable,
      jobStatuses,
    };
  }

  /** What each client's setup chat charged. */
  private readonly setupOps = new Map<number, number>();

  /** One client's loop: a request kind after another, at most ratePerClient a second. */
  private async loop(c: ClientState): Promise<void> {
    const gap = 1000 / this.opts.ratePerClient;
    const loop = this.opts.loop;
    while (!this.stopping) {
      const began = Date.now();
      const kind = loop[c.loopAt++ % loop.length];
      try {
        await this.step(c, kind);
      } catch (err) {
        if (!(err instanceof StepFailed)) throw err;
      }
      const wait = gap - (Date.now() - began);
      if (wait > 0 && !this.stopping) await sleep(wait);
    }
  }

  private async step(c: ClientState, kind: LoopKind): Promise<void> {
    switch (kind) {
      case "sync_chat":
        return this.syncChat(c);
      case "async_chat":
        return this.asyncChat(c);
      case "save":
        return this.save(c);
      case "doc_events":
        return this.docEvents(c);
      case "upload":
        return this.upload(c);
      case "presigned_upload":
        return this.presignedUpload(c);
      case "export":
        return this.exportDoc(c);
    }
  }

  private async syncChat(c: ClientState): Promise<void> {
    const from = CHAT_WORDS[c.chat.word % CHAT_WORDS.length];
    const to = CHAT_WORDS[(c.chat.word + 1) % CHAT_WORDS.length];
    const a = await this.request(c, "sync_chat", "POST", "/v1/chat", {
      message: `replace "${from}" with "${to}"`,
      session_id: c.chat.sessionId,
    });
    if (!a) {
      c.unknownBillable = true;
      return;
    }
    if (a.status !== 200) return;
    const body = JSON.parse(a.text) as {
      document_changes?: { version_id?: string; document_id?: string } | null;
      usage?: { ops_charged?: number };
    };
    const changed = body.document_changes?.version_id ?? null;
    if (changed) c.chat.word++;
    this.ledger.syncChats.push({
      client: c.index,
      documentId: c.chat.documentId,
      versionId: changed,
      opsCharged: body.usage?.ops_charged ?? 0,
    });
  }

  private async asyncChat(c: ClientState): Promise<void> {
    const a = await this.request(c, "async_chat", "POST", "/v1/chat/async", {
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
    this.ledger.jobs.push(entry);
    entry.streamedFinal = await this.stream(c, body.session_id, body.job_id);
  }

  /** Reads the job's SSE stream until `final` (or `error`), within streamTimeoutMs; records it as kind "stream". */
  private async stream(c: ClientState, sessionId: string, jobId: string): Promise<boolean> {
    const startedAt = Date.now();
    let ending: SseEvent | undefined;
    let status: RequestRecord["status"];
    let contentType: string | null = null;
    try {
      const read = await readSse(
        { url: this.opts.url },
        `/v1/chat/${encodeURIComponent(sessionId)}/stream?job_id=${encodeURIComponent(jobId)}&api_key=${encodeURIComponent(c.key)}`,
        {
          timeoutMs: this.opts.streamTimeoutMs,
          stopAfter: (e) => e.event === "final" || e.event === "error",
          onEvent: (e) => {
            if (e.event === "final" || e.event === "error") ending = e;
          },
        },
      );
      contentType = read.headers.get("content-type");
      status = ending ? read.status : read.status === 200 ? "timeout" : read.status;
    } catch {
      status = Date.now() - startedAt >= this.opts.streamTimeoutMs ? "timeout" : "network";
    }
    const final = ending?.event === "final";
    this.record({
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

  private async save(c: ClientState): Promise<void> {
    const n = c.save.n + 1;
    const marker = `c${c.index}-s${n}`;
    const html = c.save.html.replace(/marker c\d+-s\d+/, `marker ${marker}`);
    const a = await this.request(
      c,
      "save",
      "POST",
      `/v1/sessions/${c.save.sessionId}/documents/${c.save.slotId}/save`,
      {
        html,
      },
    );
    // Numbers go up even when the outcome is unknown: a later marker never repeats an earlier one.
    c.save.n = n;
    if (a?.status !== 200) return;
    const body = JSON.parse(a.text) as { version_id: string; html: string; durable_document_id: string };
    c.save.html = body.html;
    this.ledger.saves.push({
      client: c.index,
      documentId: body.durable_document_id,
      versionId: body.version_id,
      marker,
      at: Date.now(),
    });
  }

  private async docEvents(c: ClientState): Promise<void> {
    const a = await this.request(
      c,
      "doc_events",
      "GET",
      `/v1/sessions/${c.save.sessionId}/doc-events?after_id=${c.docEventsCursor}&include_own=true`,
    );
    if (a?.status === 200) c.docEventsCursor = Number((JSON.parse(a.text) as { last_id: number }).last_id);
  }

  /** The text of the next upload of `c` and its marker. */
  private nextUpload(c: ClientState, kind: string): { marker: string; bytes: Buffer } {
    const marker = `upload-c${c.index}-${kind}-${++c.uploads}`;
    return { marker, bytes: Buffer.from(`# Upload ${c.index}\n\nText ${marker}.\n`) };
  }

  private async upload(c: ClientState): Promise<void> {
    const { marker, bytes } = this.nextUpload(c, "m");
    const form = new FormData();
    form.append("file", new Blob([new Uint8Array(bytes)]), `${marker}.md`);
    const a = await this.request(c, "upload", "POST", "/v1/documents/upload", form);
    if (a?.status !== 200) return;
    const body = JSON.parse(a.text) as { durable_document_id: string };
    this.ledger.uploads.push({ client: c.index, kind: "upload", documentId: body.durable_document_id, marker });
  }

  /** POST /v1/uploads, PUT the bytes to the pre-signed URL, process into a new session: recorded as one request. */
  private async presignedUpload(c: ClientState): Promise<void> {
    const { marker, bytes } = this.nextUpload(c, "p");
    const startedAt = Date.now();
    // Each step must answer 2xx; the first that does not is what the record shows.
    const step = async (outcome: Promise<Answer>): Promise<Answer> => {
      const a = await outcome.catch(noAnswer);
      const got = answered(a);
      if (!got || got.status < 200 || got.status >= 300) {
        this.record(this.recordOf(c, "presigned_upload", startedAt, a));
        throw new StepFailed("presigned upload");
      }
      return got;
    };
    const created = await step(
      this.send(c.key, "POST", "/v1/uploads", {
        filename: `${marker}.md`,
        content_type: "text/markdown",
        size_bytes: bytes.length,
      }),
    );
    const { upload_id, upload_url } = JSON.parse(created.text) as { upload_id: string; upload_url: string };
    await step(this.fetchBounded(upload_url, { method: "PUT", body: new Uint8Array(bytes) }));
    const init = await step(this.send(c.key, "POST", "/v1/sessions/init", {}));
    const sid = (JSON.parse(init.text) as { session_id: string }).session_id;
    const processed = await step(this.send(c.key, "POST", `/v1/uploads/${upload_id}/process`, { session_id: sid }));
    this.record(this.recordOf(c, "presigned_upload", startedAt, processed));
    const body = JSON.parse(processed.text) as { durable_document_id: string };
    this.ledger.uploads.push({
      client: c.index,
      kind: "presigned_upload",
      documentId: body.durable_document_id,
      marker,
    });
  }

  /** A stored export (POST /v1/downloads of the saved document): a file written to the object store. */
  private async exportDoc(c: ClientState): Promise<void> {
    await this.request(c, "export", "POST", "/v1/downloads", {
      session_id: c.save.sessionId,
      document_id: c.save.slotId,
      format: "html",
    });
  }

  /** Sends one request and records it; null when no answer came (timeout or network). */
  private async request(
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

  private recordOf(c: ClientState, kind: RequestKind, startedAt: number, outcome: Answer | NoAnswer): RequestRecord {
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

  private record(r: RequestRecord): void {
    this.records.push(r);
    this.opts.onRecord?.(r);
  }

  /** A gateway call with the client's key, bounded by requestTimeoutMs (body: JSON, or FormData as is). */
  private send(key: string, method: string, path: string, body?: unknown): Promise<Answer> {
    const headers: Record<string, string> = { Authorization: `Bearer ${key}` };
    let payload: string | FormData | undefined;
    if (body instanceof FormData) payload = body;
    else if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      payload = JSON.stringify(body);
    }
    return this.fetchBounded(`${this.opts.url}${path}`, { method, headers, body: payload });
  }

  private async fetchBounded(url: string, init: RequestInit): Promise<Answer> {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(this.opts.requestTimeoutMs) });
    return { status: res.status, headers: res.headers, text: await res.text() };
  }
}
