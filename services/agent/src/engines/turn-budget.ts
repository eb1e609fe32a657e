// A CPU budget for the synchronous work of one offline turn. The engine runs on the agent's
// event loop, which every other tenant's requests share, so long document passes (replace
// everywhere over thousands of chunks) call tick() between steps: it yields to the event loop
// once a slice is used up, so nobody waits more than about one slice, and it stops the turn once
// its own processing time (waits excluded) passes the budget.

/** Thrown by TurnBudget.tick() when the turn has used up its processing time. */
export class BudgetExceededError extends Error {
  constructor(readonly budgetMs: number) {
    super(`the instruction needs more than ${budgetMs / 1000} s of processing`);
  }
}

export interface TurnBudgetOptions {
  /** Processing time the turn may use in total, in ms (time spent waiting is not counted). */
  budgetMs: number;
  /** Longest stretch of work between two yields to the event loop, in ms. */
  sliceMs: number;
  /** The turn's abort signal (wall-clock cap, cancel), checked after each yield. */
  signal?: AbortSignal;
}

/** Counts one turn's processing time; see the file comment. */
export class TurnBudget {
  private spentMs = 0;
  private sliceStart = performance.now();

  constructor(private readonly opts: TurnBudgetOptions) {}

  /** Processing time used so far, in ms. */
  get usedMs(): number {
    return this.spentMs + (performance.now() - this.sliceStart);
  }

  /**
   * Call between steps. Resolves at once while the slice lasts, else after yielding to the event
   * loop. Rejects with BudgetExceededError past the budget (unless `mayStop` is false: steps that
   * apply already computed edits must finish, so a turn never commits half an instruction), and
   * with the signal's reason when the turn was aborted.
   */
  async tick(mayStop = true): Promise<void> {
    const slice = performance.now() - this.sliceStart;
    if (mayStop && this.spentMs + slice > this.opts.budgetMs) throw new BudgetExceededError(this.opts.budgetMs);
    if (slice < this.opts.sliceMs) return;
    this.spentMs += slice;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.opts.signal?.throwIfAborted();
    this.sliceStart = performance.now();
  }
}
