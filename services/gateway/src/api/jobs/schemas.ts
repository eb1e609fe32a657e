// Jobs (interface-spec Job resource and endpoints 20-22; unshown-parts.md Jobs, Progress stream
// and Approval): the job object, lists, cancel, the approval and continue decisions, the stream query.
import { z } from "zod";
import { ChatResponseSchema } from "../chat/schemas.js";
import {
  apiSchemas,
  ChangeRecordSchema,
  clampedPageLimit,
  component,
  INT64_JSON_MAX,
  MAX_ID_CHARS,
  queryFlag,
  queryInt,
  UsageSchema,
} from "../shared/schemas.js";

const jobId = z.string().min(1).max(100);

/** Job status values (interface-spec, States and transitions). */
export const JOB_STATUSES = [
  "pending",
  "in_progress",
  "awaiting_approval",
  "completed",
  "failed",
  "cancelled",
] as const;

/** A change record waiting for approval, with its batch. */
export const PendingChangeSchema = ChangeRecordSchema.extend({
  batch_id: z.string().meta({ description: "Shared by every change of one turn." }),
  batch_total: z.number().int().meta({ description: "Changes in the batch." }),
}).register(apiSchemas, { id: "PendingChange" });

/** One stored progress event (metadata.intermediate_responses). */
export const IntermediateResponseSchema = component("IntermediateResponse", {
  type: z.string().meta({ description: "intermediate, document_sync, proposed_change, final, usage, error…" }),
  content: z.string().meta({
    description:
      "As on the stream: the HTML (document_sync), the progress text (intermediate), the JSON-encoded change " +
      "record (proposed_change) or batch (proposed_change_batch); empty for final (see the job's result); " +
      "other events' data object, JSON-encoded.",
  }),
  sequence: z.number().int(),
  timestamp: z.string(),
});

/** The job's metadata object. */
export const JobMetadataSchema = component("JobMetadata", {
  message: z.string(),
  document_html_provided: z.boolean(),
  filename: z.string().optional().meta({ description: "The file the job works on (an upload or attachment)." }),
  file_size: z.number().int().optional().meta({ description: "Its size in bytes." }),
  content_type: z.string().optional().meta({ description: "Its MIME type, by its extension." }),
  pending_changes: z
    .array(PendingChangeSchema)
    .optional()
    .meta({ description: "Only when status is awaiting_approval (awaiting_kind changes)." }),
  awaiting_kind: z
    .enum(["changes", "continue_prompt"])
    .optional()
    .meta({ description: "What an awaiting_approval job waits for." }),
  continue_prompt: z
    .object({
      message: z.string().meta({ description: "The question to show: the reply at the step limit." }),
      operations_applied: z.number().int().meta({ description: "Operations committed so far (they stay)." }),
      sections_changed: z.number().int().meta({ description: "Sections changed so far." }),
    })
    .optional()
    .meta({
      description:
        "Only while awaiting_kind is continue_prompt: what the paused edit asks and has done; answer with " +
        "POST /v1/chat/{session_id}/continue.",
    }),
  feedback: z.array(z.string()).optional().meta({ description: "Feedback given with denied changes." }),
  cancel_requested: z.boolean().optional(),
  intermediate_responses: z
    .array(IntermediateResponseSchema)
    .optional()
    .meta({ description: "Every stored event in order; omitted with compact=true." }),
});

/** The result of a completed attachment_processing job (interface-spec, Job result). */
export const AttachmentJobResultSchema = component("AttachmentJobResult", {
  response: z.string().meta({ description: "What processing produced, in words." }),
  session_id: z.string(),
  attachment_id: z.string(),
});

/** A job (interface-spec, Job). */
export const JobSchema = component("Job", {
  job_id: z.string(),
  session_id: z.string(),
  job_type: z.enum(["chat", "attachment_processing"]),
  status: z.enum(JOB_STATUSES),
  created_at: z.string(),
  updated_at: z.string().meta({ description: "Time of the last status change." }),
  progress: z.number().int().min(0).max(100),
  organization_id: z.string().nullable(),
  user_id: z.string().nullable(),
  result: z
    .union([ChatResponseSchema, AttachmentJobResultSchema])
    .optional()
    .meta({ description: "Only when completed (omitted with compact=true)." }),
  error: z.string().nullable().optional().meta({ description: "Only when failed." }),
  metadata: JobMetadataSchema,
});

export type JobJson = z.output<typeof JobSchema>;

/** `{jobs, total}`: chat and attachment_processing jobs together, newest first. */
export const JobListSchema = component("JobList", {
  jobs: z.array(JobSchema).meta({ description: "Chat and attachment_processing jobs, newest first by created_at." }),
  total: z.number().int().meta({ description: "Jobs returned." }),
});

/** POST /v1/chat/async response. */
export const AsyncChatResponseSchema = component("AsyncChatResponse", {
  job_id: z.string(),
  session_id: z.string(),
  status: z.literal("pending"),
  message: z.string(),
  usage: UsageSchema,
});

/** POST /v1/jobs/{job_id}/cancel response: the job plus stop_state. */
export const CancelJobResponseSchema = JobSchema.extend({
  stop_state: z.enum(["stopped_here", "accepted"]).meta({
    description: "stopped_here: stopped by this instance; accepted: the instance running it will stop it (poll).",
  }),
}).register(apiSchemas, { id: "CancelJobResponse" });

const compact = queryFlag(false, "Omit result bodies and intermediate events.");

/** GET /v1/jobs/{job_id} path. */
export const JobPathSchema = z.object({ job_id: jobId.meta({ description: "The job id." }) });

/** GET /v1/jobs/{job_id} query. */
export const GetJobQuerySchema = z.object({ compact });

/** GET /v1/jobs query. */
export const ListJobsQuerySchema = z.object({
  status: z
    .string()
    .max(64)
    .nullish()
    .meta({
      description:
        `Only jobs in this status (${JOB_STATUSES.join(", ")}), chat and attachment_processing jobs alike ` +
        "(an attachment being processed is in_progress); any other value lists none.",
    }),
  limit: clampedPageLimit(50).meta({ description: "1 to 200 (larger values are clamped to 200)." }),
  compact,
});

/** GET /v1/sessions/{session_id}/jobs query. */
export const SessionJobsQuerySchema = z.object({
  limit: clampedPageLimit(20).meta({ description: "1 to 200 (larger values are clamped to 200)." }),
  compact,
});

/** GET /v1/chat/{session_id}/stream query. */
export const StreamQuerySchema = z.object({
  job_id: jobId.meta({ description: "The job to follow." }),
  last_sequence: z
    .preprocess(queryInt, z.number().int().min(0).max(INT64_JSON_MAX).optional())
    .meta({ description: "Replay only events with a greater sequence (or send Last-Event-ID)." }),
  api_key: z.string().max(512).optional().meta({ description: "The API key, for clients that cannot send headers." }),
  token: z.string().max(512).optional().meta({ description: "Alias of api_key." }),
});

/** One decision of a batch. */
export const ChangeDecisionSchema = z.object({
  change_id: z.string().min(1).max(MAX_ID_CHARS),
  approved: z.boolean(),
  feedback: z.string().max(10_000).nullish(),
});

/** POST /v1/chat/{session_id}/approve body. */
export const ApproveRequestSchema = component("ApproveRequest", {
  job_id: jobId,
  approved: z.boolean().meta({ description: "The decision for change_id, or for every pending change." }),
  change_id: z
    .string()
    .max(MAX_ID_CHARS)
    .nullish()
    .meta({ description: "One change; omitted with no changes: all pending ones." }),
  feedback: z.string().max(10_000).nullish().meta({ description: "Why; reaches the agent." }),
  changes: z.array(ChangeDecisionSchema).max(10_000).nullish().meta({ description: "A batch of decisions." }),
});

/** POST /v1/chat/{session_id}/approve response. */
export const ApproveResponseSchema = component("ApproveResponse", {
  job: JobSchema,
  applied: z.array(z.string()).meta({ description: "Change ids committed by this call." }),
  denied: z.array(z.string()).meta({ description: "Change ids dropped by this call." }),
  version_id: z
    .string()
    .optional()
    .meta({ description: "The version the applied changes made; left out when nothing applied." }),
});

/** POST /v1/chat/{session_id}/continue body. */
export const ContinueRequestSchema = component("ContinueRequest", { job_id: jobId, continue: z.boolean() });
