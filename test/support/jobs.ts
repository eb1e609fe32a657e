// Helpers of the async chat system tests: poll a job until it reaches a status, read a
// server-sent event stream over real HTTP (@redline/local-stack's readSse).
import { sampleContract } from "./fixtures.js";
import type { TestStack } from "./stack.js";

/** A job as GET /v1/jobs/{id} returns it (the fields the tests read). */
export interface JobJson {
  job_id: string;
  session_id: string;
  job_type: string;
  status: string;
  progress: number;
  created_at: string;
  updated_at: string;
  user_id: string | null;
  organization_id: string | null;
  result?: {
    response: string;
    session_id: string;
    document_changes?: {
      updated_html?: string;
      version_id: string;
      requires_approval: boolean;
      chunk_diffs: { change_id: string; chunk_id: string; operation: string; new_html: string }[];
    };
    usage: { ops_charged: number; monthly_used: number; was_billable: boolean };
  };
  error?: string | null;
  metadata: {
    message: string;
    document_html_provided: boolean;
    awaiting_kind?: string;
    feedback?: string[];
    pending_changes?: {
      change_id: string;
      operation: string;
      chunk_id: string;
      old_html: string;
      new_html: string;
      batch_id: string;
      batch_total: number;
    }[];
    intermediate_responses?: { type: string; content: unknown; sequence: number; timestamp: string }[];
  };
}

/** GET /v1/jobs/{id} body and status. */
export async function getJob(
  stack: TestStack,
  key: string,
  jobId: string,
  query = "",
): Promise<{ status: number; body: JobJson }> {
  const res = await stack.call("GET", `/v1/jobs/${jobId}${query}`, { key });
  return { status: res.status, body: (await res.json()) as JobJson };
}

/** Polls the job until its status is one of `statuses`; throws with the last status after `timeoutMs`. */
export async function waitForJob(
  stack: TestStack,
  key: string,
  jobId: string,
  statuses: string[],
  timeoutMs = 20_000,
): Promise<JobJson> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < deadline) {
    const { status, body } = await getJob(stack, key, jobId);
    if (status === 200 && statuses.includes(body.status)) return body;
    last = status === 200 ? body.status : `HTTP ${status}`;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`job ${jobId} did not reach ${statuses.join("/")} in ${timeoutMs} ms (last: ${last})`);
}

/** POST /v1/chat/async; returns status and body. */
export async function startJob(
  stack: TestStack,
  key: string,
  body: Record<string, unknown>,
): Promise<{
  status: number;
  body: { job_id: string; session_id: string; status: string; message: string; usage: { monthly_used: number } };
}> {
  const res = await stack.call("POST", "/v1/chat/async", { key, body });
  return { status: res.status, body: await res.json() };
}

/** The edit the approval tests ask for: a new section with one paragraph, so the job stages two changes. */
export const ADD_SECTION =
  'add section "Liability" after section "3. Confidentiality" with text "Liability is capped."';

/** Starts an ADD_SECTION job on the sample contract under ask_every_time and waits until it awaits approval. */
export async function startJobAwaitingApproval(
  stack: TestStack,
  key: string,
): Promise<{ sid: string; waiting: JobJson }> {
  const created = await startJob(stack, key, {
    message: ADD_SECTION,
    document_html: sampleContract(),
    approval_mode: "ask_every_time",
  });
  const waiting = await waitForJob(stack, key, created.body.job_id, ["awaiting_approval"]);
  return { sid: created.body.session_id, waiting };
}

// The SSE reader is the mixed load's (one owner); tests keep importing it from here.
export { readSse, type SseEvent, type SseRead } from "@redline/local-stack";
