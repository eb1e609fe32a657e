// SetTestClock: moves billing's clock so tests cross period boundaries and grant expiries over the
// real stack. Refused unless the service was started with testClock (REDLINE_TEST_CLOCK=1).
import { ForbiddenError } from "@redline/service-kit";
import type { BillingRpc } from "../call.js";

/** Billing's now after the move; an unset `now` returns to real time. PERMISSION_DENIED (403) when disabled. */
export const setTestClock: BillingRpc<"setTestClock"> = async (ctx, req) => {
  if (!ctx.clock.movable) throw new ForbiddenError("The test clock is disabled on this billing service");
  ctx.clock.moveTo(req.now ?? null);
  return { now: ctx.clock.now() };
};
