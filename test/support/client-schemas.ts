// The wire contract as a strict typed client declares it, written from the spec
// (../shared/spec/interface-spec.md and unshown-parts.md), never from the gateway's own schemas:
// if both were derived from our code, a deviation would agree with itself. Objects are open (a
// client ignores fields it does not know) but every declared field is typed, and a string is
// never null. Vocabularies (job status, change operation, SSE event names) are closed.
import { z } from "zod";

/** ISO 8601 date-time with a zone, as Job.created_at/updated_at and event timestamps. */
export const IsoTimestamp = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/, "ISO 8601 timestamp");

const int = z.number().int();

/** Job status values (interface-spec, States and transitions). */
export const JOB_STATUSES = [
  "pending",
  "in_progress",
  "awaiting_approval",
  "completed",
  "failed",
  "cancelled",
] as const;

/** The statuses after which nothing more happens to a job. */
export const TERMINAL_JOB_STATUSES: readonly string[] = ["completed", "failed", "cancelled"];

/** Change record (interface-spec table; unshown-parts.md "Change records" marks the optional ones with ?). */
export const ChangeRecord = z.looseObject({
  change_id: z.string().min(1),
  operation: z.enum(["edit", "create", "delete"]),
  chunk_id: z.string(),
  document_id: z.string(),
  old_html: z.string(),
  new_html: z.string(),
  ai_explanation: z.string(),
  insert_after_chunk_id: z.string().optional(),
  batch_id: z.string().optional(),
  batch_total: int.min(1).optional(),
});
export type ChangeRecord = z.output<typeof ChangeRecord>;

/** usage object; the three monthly figures are what the spec says is always visible (Limits). */
export const Usage = z.looseObject({
  monthly_used: int.min(0),
  monthly_limit: int.min(0),
  monthly_remaining: int,
  was_billable: z.boolean().optional(),
  ops_charged: int.min(0).optional(),
  quota_exhausted: z.boolean().optional(),
  subscription_tier: z.string().optional(),
  bucket_used: z.string().optional(),
  redemption_id: z.string().optional(),
  promotions: z
    .array(
      z.looseObject({
        redemption_id: z.string(),
        name: z.string(),
        ops_remaining: int,
        ops_granted: int,
        expires_at: z.string(),
      }),
    )
    .optional(),
});

/** document_changes (interface-spec table). */
export const DocumentChanges = z.looseObject({
  updated_html: z.string().optional(),
  version_id: z.string().optional(),
  changes_summary: z.string().optional(),
  requires_approval: z.boolean().optional(),
  pending_changes: z.array(ChangeRecord).optional(),
  changes: z.array(z.looseObject({})).optional(),
  chunk_diffs: z.array(ChangeRecord).optional(),
});

/** Sync chat response: `{response, session_id, document_changes?, usage}` (unshown-parts.md). */
export const ChatResponse = z.looseObject({
  response: z.string(),
  session_id: z.string().min(1),
  document_changes: DocumentChanges.optional(),
  usage: Usage,
});
export type ChatResponse = z.output<typeof ChatResponse>;

/** A compact chat response: no full HTML, only per-section diffs (interface-spec, chat request). */
export const CompactChatResponse = ChatResponse.refine(
  (r) =>
    r.document_changes === undefined ||
    (r.document_changes.updated_html === undefined && Array.isArray(r.document_changes.chunk_diffs)),
  { message: "compact: document_changes carries chunk_diffs and no updated_html" },
);

/** Async chat response: `{job_id, session_id, status: "pending", message, usage}` (202 or 200). */
export const AsyncChatResponse = z.looseObject({
  job_id: z.string().min(1),
  session_id: z.string().min(1),
  status: z.literal("pending"),
  message: z.string(),
  usage: Usage,
});

/** The event envelope names whose data is `{type, content, sequence, timestamp}`. */
export const ENVELOPE_EVENTS = ["document_sync", "intermediate", "proposed_change", "proposed_change_batch"] as const;

/** Every SSE event name of the progress stream (unshown-parts.md, "Progress stream (SSE)"). */
export const STREAM_EVENTS = [...ENVELOPE_EVENTS, "final", "usage", "error"] as const;

/** The proposal batch inside proposed_change_batch's content. */
export const ProposalBatch = z.looseObject({
  batch_id: z.string().min(1),
  batch_total: int.min(1),
  changes: z.array(ChangeRecord),
});

/** Parses a JSON string the way a client does; undefined when it is not JSON. */
function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * An item of metadata.intermediate_responses: typed events `{type, content, sequence, timestamp}`.
 * Envelope events carry the stream's string content, so a stored proposal is double-parsed too.
 */
export const StoredEvent = z
  .looseObject({
    type: z.string().min(1),
    // Typed events: content is a string for every event (usage and error JSON-encoded).
    content: z.string(),
    sequence: int.min(1),
    timestamp: IsoTimestamp,
  })
  .superRefine((e, ctx) => {
    if (!(ENVELOPE_EVENTS as readonly string[]).includes(e.type)) return;
    if (typeof e.content !== "string") {
      ctx.addIssue({ code: "custom", message: `${e.type} content is not a string`, path: ["content"] });
      return;
    }
    const inner =
      e.type === "proposed_change" ? ChangeRecord : e.type === "proposed_change_batch" ? ProposalBatch : undefined;
    if (inner && !inner.safeParse(jsonOrUndefined(e.content)).success) {
      ctx.addIssue({ code: "custom", message: `${e.type} content is not its JSON-encoded record`, path: ["content"] });
    }
  });

/** Job metadata object (interface-spec table, plus unshown-parts.md's awaiting_kind). */
export const JobMetadata = z.looseObject({
  filename: z.string().optional(),
  file_size: int.optional(),
  content_type: z.string().optional(),
  message: z.string().optional(),
  document_html_provided: z.boolean().optional(),
  pending_changes: z.array(ChangeRecord).optional(),
  intermediate_responses: z.array(StoredEvent).optional(),
  awaiting_kind: z.enum(["changes", "continue_prompt"]).optional(),
});

/** Job result (interface-spec table). */
export const JobResult = z.looseObject({
  response: z.string().optional(),
  session_id: z.string().optional(),
  document_changes: DocumentChanges.optional(),
  usage: Usage.optional(),
  attachment_id: z.string().optional(),
});

/**
 * Job (interface-spec table) with the spec's known facts: `result` only when completed, `error`
 * only (and always) when failed, `metadata.pending_changes` only when awaiting_approval, and a
 * job belongs to a user or an organization (exactly one of the two ids is null).
 */
export const Job = z
  .looseObject({
    job_id: z.string().min(1),
    session_id: z.string().min(1),
    job_type: z.enum(["chat", "attachment_processing"]),
    status: z.enum(JOB_STATUSES),
    created_at: IsoTimestamp,
    updated_at: IsoTimestamp,
    progress: int.min(0).max(100),
    organization_id: z.string().nullable(),
    user_id: z.string().nullable(),
    result: JobResult.optional(),
    error: z.string().nullable().optional(),
    metadata: JobMetadata,
  })
  .superRefine((job, ctx) => {
    const fail = (message: string) => ctx.addIssue({ code: "custom", message });
    if (job.result !== undefined && job.status !== "completed") fail(`result on a ${job.status} job`);
    if ("error" in job && job.status !== "failed") fail(`error on a ${job.status} job`);
    if (job.status === "failed" && typeof job.error !== "string") fail("a failed job without its error");
    if (job.metadata.pending_changes !== undefined && job.status !== "awaiting_approval")
      fail(`metadata.pending_changes on a ${job.status} job`);
    if ((job.organization_id === null) === (job.user_id === null)) fail("exactly one of organization_id, user_id");
  });
export type Job = z.output<typeof Job>;

/** Job list: `{jobs, total}` with total the count returned. */
export const JobList = z
  .looseObject({ jobs: z.array(Job), total: int.min(0) })
  .refine((l) => l.total === l.jobs.length, { message: "total is the count returned" });

/** POST /v1/jobs/{id}/cancel: the job plus stop_state (unshown-parts.md, Jobs). */
export const CancelResponse = Job.and(z.looseObject({ stop_state: z.enum(["stopped_here", "accepted"]) }));

// The spec shows no body for approve and continue: a client reads the job they act on, inside
// approve's answer, and as continue's whole answer (the way cancel answers with the job).
/** POST /v1/chat/{sid}/approve: at least `{job}`. */
export const ApproveResponse = z.looseObject({ job: Job });

/** POST /v1/chat/{sid}/continue: the job. */
export const ContinueResponse = Job;

/** `{detail: string}` (interface-spec, Errors). */
export const ErrorBody = z.looseObject({ detail: z.string().min(1) });

/** 422: `{detail: [{type, loc, msg}]}`. */
export const ValidationErrorBody = z.looseObject({
  detail: z
    .array(z.looseObject({ type: z.string(), loc: z.array(z.union([z.string(), int])), msg: z.string() }))
    .min(1),
});

/** A history message (unshown-parts.md, Revert). */
export const HistoryMessage = z.looseObject({
  id: z.union([z.string(), int]),
  sender: z.enum(["user", "ai"]),
  content: z.string(),
  timestamp: IsoTimestamp,
  turn_index: int.min(0),
  checkpoint_id: z.string().optional(),
});

/** GET /v1/sessions/{sid}/history: `{session_id, messages, document_state, attachments, editor_actions, editor_action}`. */
export const History = z.looseObject({
  session_id: z.string(),
  messages: z.array(HistoryMessage),
  document_state: z.looseObject({ html_content: z.string().optional(), version_id: z.string().optional() }).nullable(),
  attachments: z.array(z.looseObject({})),
  editor_actions: z.array(z.looseObject({})),
  editor_action: z.enum(["update", "clear"]).optional(),
});

/**
 * Fields the spec documents as nullable; null anywhere else breaks a typed client (unshown-parts.md:
 * "Fields typed string in the spec are never null on the wire").
 */
const NULLABLE_FIELDS = new Set([
  "organization_id",
  "user_id",
  "error",
  "durable_document_id",
  "document_state",
  "page_setup",
]);

/** JSON paths of nulls outside the spec's nullable fields. */
export function unexpectedNulls(value: unknown, path = "$", field = ""): string[] {
  if (value === null) return NULLABLE_FIELDS.has(field) ? [] : [path];
  if (Array.isArray(value)) return value.flatMap((v, i) => unexpectedNulls(v, `${path}[${i}]`, field));
  if (typeof value === "object")
    return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => unexpectedNulls(v, `${path}.${k}`, k));
  return [];
}

/** Parses `value` with `schema` and rejects stray nulls; throws a message naming what failed. */
export function strictParse<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new Error(`${what}: ${z.prettifyError(parsed.error)}\n${JSON.stringify(value).slice(0, 2000)}`);
  const nulls = unexpectedNulls(value);
  if (nulls.length > 0) throw new Error(`${what}: null where the spec has a value: ${nulls.join(", ")}`);
  return parsed.data;
}

// ---- The progress stream -------------------------------------------------------------------

const envelope = <Name extends string>(name: Name) =>
  z.looseObject({ type: z.literal(name), content: z.string(), sequence: int.min(1), timestamp: IsoTimestamp });

/** One SSE event as a client's parser hands it over: the event name, the id line, the data line's JSON. */
export interface RawSseEvent {
  id?: string;
  event: string;
  data: unknown;
}

/** A progress-stream event after a typed client parsed it (proposals double-parsed), with its SSE id. */
export type StreamEvent = { id?: string } & (
  | { event: "document_sync" | "intermediate"; sequence: number; content: string; data: Record<string, unknown> }
  | { event: "proposed_change"; sequence: number; record: ChangeRecord; data: Record<string, unknown> }
  | {
      event: "proposed_change_batch";
      sequence: number;
      batch: z.output<typeof ProposalBatch>;
      data: Record<string, unknown>;
    }
  | { event: "final"; result: ChatResponse; data: Record<string, unknown> }
  | { event: "usage"; usage: z.output<typeof StreamUsage>; data: Record<string, unknown> }
  | { event: "error"; error: string; data: Record<string, unknown> }
);

/** The usage event: `{monthly_used, monthly_limit, monthly_remaining}`. */
export const StreamUsage = z.looseObject({ monthly_used: int, monthly_limit: int, monthly_remaining: int });

/** Parses a JSON string the way a client does, failing with `what` in the message. */
function jsonOf(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${what}: content is not JSON: ${text.slice(0, 200)}`);
  }
}

/**
 * Parses one SSE event as a strict client: the name must be one of the spec's, envelope data is
 * `{type = name, content: string, sequence = id, timestamp}`, and a proposal's content is parsed
 * a second time into a change record or `{batch_id, batch_total, changes}`.
 */
export function parseStreamEvent(raw: RawSseEvent): StreamEvent {
  return { id: raw.id, ...parseEventData(raw) };
}

function parseEventData(raw: RawSseEvent): StreamEvent {
  const what = `SSE ${raw.event}#${raw.id ?? "-"}`;
  if (!(STREAM_EVENTS as readonly string[]).includes(raw.event)) throw new Error(`${what}: event name not in the spec`);
  const name = raw.event as (typeof STREAM_EVENTS)[number];
  const data = strictParse(z.looseObject({}), raw.data, what) as Record<string, unknown>;
  if ((ENVELOPE_EVENTS as readonly string[]).includes(name)) {
    const env = strictParse(envelope(name), data, what);
    if (raw.id !== undefined && Number(raw.id) !== env.sequence) throw new Error(`${what}: id differs from sequence`);
    if (name === "proposed_change") {
      const record = strictParse(ChangeRecord, jsonOf(env.content, what), `${what} content`);
      return { event: name, sequence: env.sequence, record, data };
    }
    if (name === "proposed_change_batch") {
      const batch = strictParse(ProposalBatch, jsonOf(env.content, what), `${what} content`);
      if (batch.batch_total !== batch.changes.length) throw new Error(`${what}: batch_total differs from changes`);
      return { event: name, sequence: env.sequence, batch, data };
    }
    return { event: name as "document_sync" | "intermediate", sequence: env.sequence, content: env.content, data };
  }
  if (name === "final") return { event: name, result: strictParse(ChatResponse, data.result, `${what} result`), data };
  if (name === "usage") return { event: name, usage: strictParse(StreamUsage, data, what), data };
  return { event: "error", error: strictParse(z.looseObject({ error: z.string().min(1) }), data, what).error, data };
}

/**
 * True when a client must consider the stream over: `final`, `error`, or an event whose
 * `data.status` is a terminal job status. Anything else (a batch of proposals, silence) is not
 * an end: the job may be waiting for a decision.
 */
export function endsStream(e: Pick<RawSseEvent, "event" | "data">): boolean {
  if (e.event === "final" || e.event === "error") return true;
  const status = (e.data as { status?: unknown } | null)?.status;
  return typeof status === "string" && TERMINAL_JOB_STATUSES.includes(status);
}

/**
 * A job as the job lists and GET /v1/jobs/{id} answer it, read strictly: no top-level field
 * outside the spec's Job table, strings never null but the documented three, and the listing
 * metadata (`filename`, `file_size`, `content_type` for jobs that carry a file).
 */
export const ListedJob = z.strictObject({
  job_id: z.string(),
  session_id: z.string(),
  job_type: z.enum(["chat", "attachment_processing"]),
  status: z.enum(["pending", "in_progress", "awaiting_approval", "completed", "failed", "cancelled"]),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  progress: z.number().int().min(0).max(100),
  organization_id: z.string().nullable(),
  user_id: z.string().nullable(),
  result: z.record(z.string(), z.unknown()).optional(),
  error: z.string().nullable().optional(),
  metadata: z.looseObject({
    filename: z.string().optional(),
    file_size: z.number().int().optional(),
    content_type: z.string().optional(),
    message: z.string(),
    document_html_provided: z.boolean(),
  }),
});

/** `{jobs, total}` of ListedJob, strictly. */
export const ListedJobList = z.strictObject({ jobs: z.array(ListedJob), total: z.number().int() });
