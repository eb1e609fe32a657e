// What the mixed load sends and records: the request kinds, one record per request, the ledger
// of acknowledged writes, fault windows and the figures computed from records.

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
  /**
   * The answer (or failure) came from the object store itself, not from Redline: the PUT of a
   * pre-signed upload, which the client sends straight to S3.
   */
  direct?: boolean;
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
