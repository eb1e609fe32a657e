// SignUpAgent (POST /v1/agents/signup, no key): an agent gets a free account and its key.
import { signUpAgent as signUp } from "../../commands/handoffs.js";
import type { AccountsRpc } from "../call.js";

/** The account id, key (shown once) and plan; RESOURCE_EXHAUSTED (429, Retry-After) past the per-source hourly cap. */
export const signUpAgent: AccountsRpc<"signUpAgent"> = (ctx, req) =>
  signUp(ctx.db, { name: req.name, source: req.source }, ctx.agentSignupsPerHour, ctx.clock.now());
