// What a job stopped while waiting (cancelled, or its approval timed out) leaves behind, the same
// for every way it stops: changes already applied stay, billed and recorded as a turn; staged ones
// are dropped; with nothing applied the operation held for it is released.
import type { Logger } from "@redline/service-kit";
import type { AgentContext } from "../context.js";
import type { JobRow } from "../db/tables.js";
import { release } from "../turn/ledger.js";
import { jobOpts } from "./actor.js";
import { recordApprovalTurn, recordPausedTurn } from "./records.js";

/** The notes appended to the stopped turn's reply: after `n` approved changes, or at a continue prompt. */
export interface StopNotes {
  applied: (n: number) => string;
  paused: string;
}

/**
 * Settles `row` (as read before its status changed): records an approval job's applied changes or
 * a paused long edit's committed part with its note (never remembered for later turns), else
 * releases the hold. A recording failure is logged, not thrown: the status change already happened.
 */
export async function settleStoppedJob(ctx: AgentContext, row: JobRow, notes: StopNotes, log: Logger): Promise<void> {
  const { staged, paused } = row.state;
  const recorded = (p: Promise<unknown>) => p.catch((err) => log.warn({ err }, "recording the stopped turn failed"));
  // A stopped instruction is not one to carry into later turns.
  const noMemory = { remember: false, memoryKey: "" };
  if (staged && staged.applied.length > 0) {
    await recorded(
      recordApprovalTurn(ctx, row, staged, `${staged.reply}\n\n${notes.applied(staged.applied.length)}`, noMemory),
    );
  } else if (paused && paused.opsCount > 0) {
    await recorded(recordPausedTurn(ctx, row, paused, `${paused.reply}\n\n${notes.paused}`, noMemory));
  } else {
    await release(ctx, jobOpts(ctx, row), row.charge_key, log);
  }
}
