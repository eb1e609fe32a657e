// Billing's one source of "now": periods, grant expiry and Retry-After all read it. Tests move it
// over the real stack with the SetTestClock RPC; that RPC refuses unless the service was started
// with the test clock (config testClock, env REDLINE_TEST_CLOCK=1), so production keeps real time.
// A per-process setting (not an env offset read at start) so one test can cross a period boundary.

/** Billing's clock. `now()` is real time plus the offset a test set. */
export interface Clock {
  now(): Date;
  /** Whether SetTestClock may move this clock. */
  readonly movable: boolean;
  /** Makes `now()` read `target` from this moment on (it keeps ticking); null = real time. */
  moveTo(target: Date | null): void;
}

/** A clock at real time; `movable` only for test stacks. */
export function createClock(movable: boolean): Clock {
  let offsetMs = 0;
  return {
    movable,
    now: () => new Date(Date.now() + offsetMs),
    moveTo(target) {
      if (!movable) throw new Error("this billing clock is not movable");
      offsetMs = target ? target.getTime() - Date.now() : 0;
    },
  };
}
