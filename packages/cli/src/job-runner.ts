// Runs one async chat job to its end for a command: progress from the SSE stream (the job's
// `progress` read back after each event), --review decisions when changes are proposed, the
// answer to a continue prompt, and Ctrl-C: the job is cancelled (POST /v1/jobs/{id}/cancel)
// before the command exits 130.
import {
  type ChatRequest,
  type ChatResponse,
  type Job,
  proposedChanges,
  RedlineApiError,
  type RedlineClient,
} from "@redline/client";
import type { CliIo } from "./context.js";
import { InterruptedError, JobError } from "./errors.js";
import type { Reporter } from "./output.js";
import { createPrompter, type Prompter } from "./prompt.js";
import { askDecisions } from "./review.js";

/** How the job runs. */
export interface RunJobOptions {
  /** Ask the user about each proposed change (the job runs with approval_mode ask_every_time). */
  review: boolean;
}

/** The finished chat job (status completed, with its chat result). */
export type CompletedJob = Omit<Job, "result"> & { result: ChatResponse };

/** Starts the chat job, follows it to completion and answers it; throws JobError when it does not complete. */
export async function runChatJob(
  client: RedlineClient,
  request: ChatRequest,
  io: CliIo,
  reporter: Reporter,
  opts: RunJobOptions,
): Promise<CompletedJob> {
  const abort = new AbortController();
  let interrupted = false;
  let jobId: string | undefined;
  let prompter: Prompter | undefined;
  const interrupt = () => {
    if (interrupted) return;
    interrupted = true;
    abort.abort(new InterruptedError(jobId));
  };
  const stopListening = io.onInterrupt(interrupt);
  try {
    const started = await client.chatAsync({
      ...request,
      approval_mode: opts.review ? "ask_every_time" : "approve_all",
    });
    jobId = started.jobId;
    const sessionId = started.job.session_id;
    if (interrupted) throw new InterruptedError(jobId);
    reporter.stage("edit", 0, `job ${jobId}`);
    for await (const event of client.streamJob(jobId, { sessionId, signal: abort.signal })) {
      const data = event.data as { type?: string; content?: unknown } | null;
      if (event.event === "proposed_change_batch") {
        prompter ??= createPrompter(io.stdin, io.stderr, interrupt);
        await untilAborted(
          decide(client, jobId, sessionId, proposedChanges(event), prompter, io, reporter, opts, abort.signal),
          abort.signal,
        );
      } else if (event.event === "intermediate" && data?.type === "continue_prompt") {
        prompter ??= createPrompter(io.stdin, io.stderr, interrupt);
        const text = String(data.content ?? "");
        await untilAborted(
          answerContinue(client, jobId, sessionId, text, prompter, reporter, opts, abort.signal),
          abort.signal,
        );
      } else if (event.event === "intermediate" || event.event === "document_sync") {
        const note = event.event === "intermediate" && typeof data?.content === "string" ? data.content : "";
        reporter.progress(await progressOf(client, jobId), note.split("\n")[0]);
      }
      if (interrupted) break;
    }
    if (interrupted) throw new InterruptedError(jobId);
    const job = await getJob(client, jobId);
    reporter.progress(100, job.status);
    reporter.done();
    if (job.status !== "completed" || !job.result)
      throw new JobError(`Job ${jobId} ${job.status}${job.error ? `: ${job.error}` : ""}`, jobId, job.status);
    // A chat job's result is the chat response (the union's other member is an attachment job's).
    return job as CompletedJob;
  } catch (err) {
    reporter.done();
    if (interrupted && jobId) {
      await cancel(client, jobId, reporter);
      throw new InterruptedError(jobId);
    }
    throw err;
  } finally {
    prompter?.close();
    stopListening();
  }
}

async function getJob(client: RedlineClient, jobId: string, compact = false): Promise<Job> {
  return client.getJob(jobId, { compact });
}

/** The job's progress (0-100) as GET /v1/jobs/{id}?compact=true reports it; 0 when it cannot be read. */
async function progressOf(client: RedlineClient, jobId: string): Promise<number> {
  try {
    return (await getJob(client, jobId, true)).progress;
  } catch {
    return 0;
  }
}

/** Cancels the job; one that already ended (409) is left as it is. */
async function cancel(client: RedlineClient, jobId: string, reporter: Reporter): Promise<void> {
  try {
    await client.cancel(jobId);
    reporter.note(`Cancelled job ${jobId}`);
  } catch (err) {
    reporter.note(`Could not cancel job ${jobId}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * Answers a proposal: in review, the user's decisions (only for changes still pending, read
 * back from the job once it awaits approval); otherwise everything is approved (a job started
 * with approve_all proposes nothing, so this is only a safety net).
 */
async function decide(
  client: RedlineClient,
  jobId: string,
  sessionId: string,
  proposed: { change_id: string }[],
  prompter: Prompter,
  io: CliIo,
  reporter: Reporter,
  opts: RunJobOptions,
  signal: AbortSignal,
): Promise<void> {
  const job = await awaitingJob(client, jobId);
  if (!job) return;
  const pending = job.metadata?.pending_changes ?? [];
  const ids = new Set(proposed.map((c) => c.change_id));
  const changes = pending.filter((c) => ids.size === 0 || ids.has(c.change_id));
  if (changes.length === 0) return;
  reporter.done();
  const decisions = opts.review
    ? await askDecisions(changes, prompter, (text) => io.stderr.write(text))
    : changes.map((c) => ({ change_id: c.change_id, approved: true }));
  // Ctrl-C at the prompt: the job is cancelled instead; no decision is sent.
  if (signal.aborted) return;
  orThrow(
    await client.api.POST("/v1/chat/{session_id}/approve", {
      params: { path: { session_id: sessionId } },
      body: { job_id: jobId, approved: true, changes: decisions },
    }),
  );
  const approved = decisions.filter((d) => d.approved).length;
  reporter.note(`Approved ${approved}, denied ${decisions.length - approved}`);
  reporter.stage("edit", await progressOf(client, jobId), `job ${jobId}`);
}

/** Asks whether a long edit that paused at its step limit goes on (yes without --review). */
async function answerContinue(
  client: RedlineClient,
  jobId: string,
  sessionId: string,
  text: string,
  prompter: Prompter,
  reporter: Reporter,
  opts: RunJobOptions,
  signal: AbortSignal,
): Promise<void> {
  if (!(await awaitingJob(client, jobId))) return;
  reporter.note(text);
  const answer = opts.review ? await prompter.ask("Continue? [y/n] ") : "y";
  if (signal.aborted) return;
  orThrow(
    await client.api.POST("/v1/chat/{session_id}/continue", {
      params: { path: { session_id: sessionId } },
      body: { job_id: jobId, continue: /^y(es)?$/i.test(answer ?? "") },
    }),
  );
}

/** The job once it awaits approval (events can run ahead of the status); undefined when it ended instead. */
async function awaitingJob(client: RedlineClient, jobId: string): Promise<Job | undefined> {
  for (;;) {
    const job = await getJob(client, jobId);
    if (job.status === "awaiting_approval") return job;
    if (job.status === "completed" || job.status === "failed" || job.status === "cancelled") return undefined;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A raw `client.api` answer: RedlineApiError when it is not 2xx, as the client's helpers throw. */
function orThrow(result: { error?: unknown; response: Response }): void {
  if (!result.response.ok)
    throw new RedlineApiError(result.response.status, result.error ?? null, result.response.headers);
}

/** `work`, or the abort reason as soon as `signal` aborts (a prompt waiting for a line does not hold Ctrl-C up). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
