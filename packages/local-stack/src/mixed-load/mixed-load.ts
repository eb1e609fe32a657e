// The mixed load of issue #10: N virtual clients against a gateway, each looping over the kinds
// of request a real client sends (sync chat on a small stored document through the offline
// engine, async chat with its SSE stream read to `final`, saves, doc-event polls, uploads,
// exports) at a bounded rate. Every request is recorded (kind, status, latency, acknowledged),
// every acknowledged write goes into a ledger, and verify() checks afterwards that each one is
// there, that every job reached a terminal state and that billing charged each turn once.
// Fault windows are marked so figures can be given per fault (tests, `pnpm bench q`, soak).
import { setTimeout as sleep } from "node:timers/promises";
import { type ClientState, LoadIo, type LoadSettings, StepFailed } from "./client.js";
import {
  DEFAULT_LOOP,
  type FaultMark,
  type FaultWindow,
  type KindStats,
  type Ledger,
  type MixedLoadOptions,
  REQUEST_KINDS,
  type RequestKind,
  type RequestRecord,
  statsOf,
  type VerifyReport,
} from "./model.js";
import { CHAT_WORDS, SCENARIOS } from "./scenarios/index.js";
import { type VerifyOptions, verifyLoad } from "./verify.js";

/**
 * The load: `setup()` gives every client its documents (must succeed), `start()` runs the
 * loops until `stop()`; `records`, `ledger` and `faults` are read meanwhile or afterwards.
 */
export class MixedLoad {
  readonly faults: FaultWindow[] = [];
  private clients: ClientState[] = [];
  private running: Promise<void>[] = [];
  private stopping = false;
  private readonly io: LoadIo;
  private readonly opts: LoadSettings;
  /** What each client's setup chat charged. */
  private readonly setupOps = new Map<number, number>();

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
    this.io = new LoadIo(this.opts);
  }

  /** Every request so far, in the order they ended. */
  get records(): RequestRecord[] {
    return this.io.records;
  }

  /** The acknowledged writes so far. */
  get ledger(): Ledger {
    return this.io.ledger;
  }

  /** Creates each client's sessions and documents (a chat document, a saved document). Throws on any failure. */
  async setup(): Promise<void> {
    this.clients = await Promise.all(
      this.opts.keys.map(async (key, index) => {
        const must = async (method: string, path: string, body?: unknown) => {
          const a = await this.io.send(key, method, path, body);
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

  /** Checks the ledger against the server (verifyLoad); call after stop(). */
  verify(opts: VerifyOptions = {}): Promise<VerifyReport> {
    return verifyLoad(this.io, this.clients, this.setupOps, opts);
  }

  /** One client's loop: a request kind after another, at most ratePerClient a second. */
  private async loop(c: ClientState): Promise<void> {
    const gap = 1000 / this.opts.ratePerClient;
    const loop = this.opts.loop;
    while (!this.stopping) {
      const began = Date.now();
      const kind = loop[c.loopAt++ % loop.length];
      try {
        await SCENARIOS[kind](this.io, c);
      } catch (err) {
        if (!(err instanceof StepFailed)) throw err;
      }
      const wait = gap - (Date.now() - began);
      if (wait > 0 && !this.stopping) await sleep(wait);
    }
  }
}
