// Who a job acts as: its creator's principal, with the job id as the request id.
import { type CallOpts, traceLogFields } from "@redline/service-kit";
import type { AgentContext } from "../context.js";
import type { JobRow } from "../db/tables.js";
import { jobCommitKey } from "../turn/keys.js";
import type { TurnActor } from "../turn/prepare.js";

/** Call options of a job's calls: the creator's principal, the job id as request id, and the run's span when it runs here. */
export function jobOpts(ctx: AgentContext, row: JobRow): CallOpts {
  return { principal: row.principal, requestId: row.id, trace: ctx.running.get(row.id)?.trace };
}

/** The turn actor of a job; its commit key moves on with each continue cycle that committed. */
export function jobActor(ctx: AgentContext, row: JobRow): TurnActor {
  return {
    principal: row.principal,
    opts: jobOpts(ctx, row),
    log: ctx.log.child({ jobId: row.id, ...traceLogFields(ctx.running.get(row.id)?.trace) }),
    commitKey: jobCommitKey(row.id, row.state.paused?.opsCount ?? 0),
  };
}
