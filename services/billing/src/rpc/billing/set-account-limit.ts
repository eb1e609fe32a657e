// SetAccountLimit (admin CLI `admin accounts set-limit`): an enterprise account's custom limit.
import { setCustomLimit } from "../../commands/plans.js";
import { getUsage } from "../../commands/quota.js";
import { toAccountRef, toUsage } from "../../mappers.js";
import type { BillingRpc } from "../call.js";

/** The account and its usage under the new limit; INVALID_ARGUMENT limit < 1 or not enterprise, NOT_FOUND unknown account. */
export const setAccountLimit: BillingRpc<"setAccountLimit"> = async (ctx, req) => {
  const account = await setCustomLimit(ctx.db, toAccountRef(req.account), req.monthlyLimit);
  return { accountId: account.id, usage: toUsage(await getUsage(ctx.db, { ownerId: account.id }, ctx.clock.now())) };
};
