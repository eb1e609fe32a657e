// ClaimHandoff (POST /v1/agents/handoff/{id}/claim, no key): a human adopts the agent's account.
import { claimHandoff as claim } from "../../commands/handoffs.js";
import type { AccountsRpc } from "../call.js";

/** The adopted account id and a new key; 403 wrong code (attempts left), 410 disabled for good, 404 unknown or expired. */
export const claimHandoff: AccountsRpc<"claimHandoff"> = (ctx, req) =>
  claim(ctx.db, { handoffId: req.handoffId, code: req.code }, ctx.clock.now());
