// SetAccountPlan (admin CLI `admin accounts set-plan`): a plan change that applies mid-cycle.
import { changePlan } from "../../commands/plans.js";
import { getUsage } from "../../commands/quota.js";
import { toAccountRef, toUsage } from "../../mappers.js";
import type { BillingRpc } from "../call.js";

/** The account and its usage under the new plan; INVALID_ARGUMENT unknown plan or anchor, NOT_FOUND unknown account. */
export const setAccountPlan: BillingRpc<"setAccountPlan"> = async (ctx, req) => {
  const now = ctx.clock.now();
  const account = await changePlan(
    ctx.db,
    toAccountRef(req.account),
    { plan: req.plan, anchorDay: req.anchorDay || undefined },
    now,
  );
  return { accountId: account.id, usage: toUsage(await getUsage(ctx.db, { ownerId: account.id }, now)) };
};
