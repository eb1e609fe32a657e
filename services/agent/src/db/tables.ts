// Row types and table names of the agent schema (snake_case, as stored).
import type { ChunkOperation } from "@redline/html-chunks";
import type { Principal } from "@redline/service-kit";
import { SCHEMA } from "./migrations.js";

/** Qualified table names. */
export const T = {
  jobs: `${SCHEMA}.jobs`,
  events: `${SCHEMA}.job_events`,
  turnRecords: `${SCHEMA}.turn_records`,
  /** Job lifecycle events owed to JetStream (jobs/lifecycle-relay.ts). */
  jobOutbox: `${SCHEMA}.job_outbox`,
} as const;

/** Job status values (interface-spec, States and transitions). */
export type JobStatus = "pending" | "in_progress" | "awaiting_approval" | "completed" | "failed" | "cancelled";

/** Statuses a job never leaves. */
export const TERMINAL_STATUSES: readonly JobStatus[] = ["completed", "failed", "cancelled"];

/** One async chat job. */
export interface JobRow {
  id: string;
  owner_id: string;
  user_id: string | null;
  organization_id: string | null;
  principal: { userId: string; organizationId: string; ownerId: string; plan: string };
  session_id: string;
  job_type: string;
  status: JobStatus;
  progress: number;
  /** The ChatRequest as ts-proto JSON (ChatRequest.toJSON). */
  request: unknown;
  /** ChatResponse.toJSON when completed. */
  result: unknown | null;
  error: string | null;
  metadata: JobMetadata;
  state: JobState;
  charge_key: string;
  /** W3C traceparent of the creating request; the job run continues its trace. */
  traceparent: string | null;
  cancel_requested: boolean;
  lease_owner: string | null;
  lease_expires_at: Date | null;
  heartbeat_at: Date | null;
  attempts: number;
  next_sequence: number;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

/** A change staged for approval (change record fields plus its batch). */
export interface StagedChange {
  change_id: string;
  operation: "edit" | "create" | "delete";
  chunk_id: string;
  document_id: string;
  old_html: string;
  new_html: string;
  ai_explanation: string;
  insert_after_chunk_id: string;
  batch_id: string;
  batch_total: number;
}

/** The job's public metadata (spec: Job metadata object). */
export interface JobMetadata {
  message?: string;
  document_html_provided?: boolean;
  filename?: string;
  file_size?: number;
  /** The upload's MIME type by its extension (jobs created before it was recorded have none). */
  content_type?: string;
  response_mode?: string;
  pending_changes?: StagedChange[];
  awaiting_kind?: "changes" | "continue_prompt";
  feedback?: string[];
}

/** A turn whose edits are committed (kept so a rerun after a crash does not commit again). */
export interface CommittedTurn {
  reply: string;
  /** DocumentChanges JSON. */
  documentChanges?: unknown;
  /** Operations to bill. */
  operations: number;
  title: string;
  checkpointVersionId: string;
  /** The roster attach the record still owes a document the turn loaded. */
  attach?: { focus: boolean; slotId: string };
  /** ChatResponse JSON once billed and recorded. */
  result?: unknown;
}

/** What the worker keeps between the staging and the decisions of an approval job. */
export interface JobState {
  /** The job's request minted its session: nothing was attached to it when the job started. */
  newSession?: boolean;
  /** Set once the turn's edits are committed (approve_all). */
  committed?: CommittedTurn;
  /** Set when the turn's changes are staged (approval mode). */
  staged?: {
    durableId: string;
    /** Head after the last applied batch: the base of the next commit. */
    headVersionId: string;
    /** Version before the turn (the turn's checkpoint). */
    checkpointVersionId: string;
    title: string;
    slotId: string;
    reply: string;
    /** Net operations of the turn keyed by change id (ChunkOperation JSON). */
    operations: Record<string, ChunkOperation>;
    /** Change records applied so far. */
    applied: StagedChange[];
    /** The section (heading chunk id) each change falls in, for billing. */
    sectionOf: Record<string, string>;
    /** Wall-clock cap was reached: the reply is the wrap-up message. */
    timedOut: boolean;
  };
  /** Set while paused at a continue prompt: what the committed part of the edit amounts to. */
  paused?: {
    reply: string;
    /** Sections changed so far (billing at the end). */
    sections: number;
    /** Operations committed so far. */
    opsCount: number;
    /** document_changes of the last committed part (DocumentChanges JSON). */
    documentChanges?: unknown;
    /** Version before the job's first turn. */
    checkpointVersionId: string;
  };
}

/** One stored event of a job. */
export interface JobEventRow {
  job_id: string;
  sequence: string | number;
  type: string;
  data: Record<string, unknown>;
  created_at: Date;
}

/** A committed sync turn's settle and record still owed (the record outbox, turn/record-outbox.ts). */
export interface TurnRecordRow {
  charge_key: string;
  /** The session of the owed AppendTurn; null when there is none (re-edit). */
  session_id: string | null;
  /** Operations the settle bills (0 releases the hold). */
  operations: number;
  /** sessions.v1 AppendTurnRequest.toJSON; null when the turn has no session record (re-edit). */
  append_request: unknown | null;
  principal: Principal;
  request_id: string;
  /** W3C traceparent of the turn's span: the relay's work joins the turn's trace. */
  traceparent: string | null;
  attempts: number;
  last_error: string | null;
  next_attempt_at: Date;
  created_at: Date;
}

/** A job lifecycle event in the outbox, as the status change wrote it. */
export interface JobOutboxRow {
  id: string;
  job_id: string;
  owner_id: string;
  session_id: string;
  /** completed, failed or awaiting_approval. */
  status: JobStatus;
  error: string | null;
  created_at: Date;
  published_at: Date | null;
}
