// Approval that ends (ARCHITECTURE "Async chat jobs"): a job nobody decides on within
// APPROVAL_TIMEOUT_S of the start of its wait fails, run by the worker pool's sweep. Like a
// cancel it drops what is still staged and releases the hold; changes already approved stay in
// the document and are billed and recorded, as a cancel does.
import type { AgentContext } from "../context.js";
import { expiredApprovals, findJob, lockKey } from "../db/store/jobs.js";
import type { JobRow } from "../db/tables.js";
import { jobLockKey } from "../turn/keys.js";
import { markApprovalExpired } from "./lifecycle.js";
import { settleStoppedJob } from "./settle.js";

/** The job's error when its wait ran out: says how long, and what became of its changes. */
export function approvalTimeoutError(row: Pick<JobRow, "metadata">, timeoutMs: number): string {
  const after = `Approval timed out after ${Math.round(timeoutMs / 1000)} s`;
  return row.metadata.awaiting_kind === "continue_prompt"
    ? `${after}: nobody asked the job to continue; the edits made before the prompt are kept`
    : `${after}: nobody approved or denied the pending changes, so they were discarded`;
}

/** Fails every job awaiting approval for `approvalTimeoutMs` or longer; returns how many it failed. */
export async function expireApprovals(ctx: AgentContext): Promise<number> {
  const timeoutMs = ctx.jobsCfg.approvalTimeoutMs;
  let failed = 0;
  for (const row of await expiredApprovals(ctx.db, timeoutMs)) {
    if (await expireOne(ctx, row.id, row.owner_id, timeoutMs)) failed++;
  }
  return failed;
}

/**
 * Expires one job under the lock decisions take (commands/approval.ts), so a decision that is
 * committing changes right now finishes first and the state read here is the one it left.
 */
async function expireOne(ctx: AgentContext, jobId: string, ownerId: string, timeoutMs: number): Promise<boolean> {
  const log = ctx.log.child({ jobId });
  return ctx.db.transaction(async (trx) => {
    await lockKey(trx, jobLockKey(jobId));
    const row = await findJob(ctx.db, ownerId, jobId);
    if (row?.status !== "awaiting_approval") return false;
    const error = approvalTimeoutError(row, timeoutMs);
    const expired = await markApprovalExpired(ctx, jobId, timeoutMs, error);
    if (!expired) return false; // decided or requeued meanwhile, or its wait began again
    log.info({ awaitingKind: row.metadata.awaiting_kind, timeoutMs }, "approval timed out; job failed");
    await settleStoppedJob(
      ctx,
      row,
      {
        applied: (n) => `(${error}. ${n} change${n === 1 ? " was" : "s were"} applied before.)`,
        paused: `(${error}.)`,
      },
      log,
    );
    return true;
  });
}
