// The idempotency keys of a turn's writes, defined once. Billing's Reserve/Settle are idempotent
// per charge key; documents' CommitTurn per load and commit key, so a job rerun after a
// crash (ARCHITECTURE "Async chat jobs", Crash) neither charges nor writes twice.
import { randomBytes, randomUUID } from "node:crypto";

/** A new job id: `job_` and 24 hex characters. */
export function newJobId(): string {
  return `job_${randomBytes(12).toString("hex")}`;
}

/** Charge key of one synchronous chat turn. */
export function chatChargeKey(): string {
  return `chat:${randomUUID()}`;
}

/** Charge key of one re-edit. */
export function reEditChargeKey(): string {
  return `re-edit:${randomUUID()}`;
}

/** Charge key of a job: one per job, settled once by whichever worker or decision finishes it. */
export function jobChargeKey(jobId: string): string {
  return `job:${jobId}`;
}

/**
 * Commit key of a job's turn: one per committing turn, since each continue cycle that commits
 * raises `opsCommitted` (the operations committed by the job so far).
 */
export function jobCommitKey(jobId: string, opsCommitted: number): string {
  return `${jobId}:${opsCommitted}`;
}

/** Load key (CommitTurn) of the content a keyed turn stores: a rerun gets the copy its first run stored. */
export function loadKey(commitKey: string): string {
  return `${commitKey}:load`;
}

/** Load key of a sync turn's content: storing it again after a refused commit replays the store. */
export function turnLoadKey(): string {
  return `chat-load:${randomUUID()}`;
}

/** Commit key of one approval decision (the approved change ids): a retried decision commits once. */
export function approvalCommitKey(jobId: string, changeIds: string[]): string {
  return `${jobId}:approve:${[...changeIds].sort().join(",")}`;
}

/** Advisory lock key serializing the decisions on one job. */
export function jobLockKey(jobId: string): string {
  return `job:${jobId}`;
}
