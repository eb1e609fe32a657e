// Agent sign-up and takeover: an agent signs itself up (no key) for a free account, later opens a
// takeover link for a human's email (with its key; the code goes by mail), and the human claims
// the account with that code (no key). The account id never changes, so its documents, sessions
// and usage stay with it.
import { defineRoute, type Route } from "../../route-registry.js";
import { usageOn429 } from "../shared/mappers.js";
import { answers, endpoint } from "../shared/routes.js";
import { claimToJson, handoffToJson, signupToJson } from "./mappers.js";
import * as schemas from "./schemas.js";

/** POST /v1/agents/signup `{name?}` (no key) → `{account_id, api_key, plan}`. */
export const signupRoute = defineRoute({
  ...endpoint("POST /v1/agents/signup", "signUpAgent", "Sign up as an agent", "agents"),
  auth: false,
  // It answers a key: a web page must not be able to sign up agents from its visitors' browsers.
  refuseBrowsers: true,
  description:
    "Needs no key. Creates an account on the free plan and its first key. Limited per source address (an IPv6 " +
    "address by its /64) per hour (429 with Retry-After). Not for web pages: no CORS headers, and a request with " +
    "an Origin header is refused (403 browser_origin).",
  request: { body: schemas.SignupSchema },
  ...answers(schemas.SignupResponseSchema, { status: 201, description: "The new account and its key." }, [
    schemas.BrowserOriginResponse,
    schemas.SignupLimitResponse,
    503,
  ]),
  async handle({ body }, call) {
    const res = await call.ctx.accounts.signUpAgent({ name: body?.name ?? "", source: call.sourceAddress }, call.rpc());
    return { status: 201, body: signupToJson(res) };
  },
});

/** POST /v1/agents/handoff `{email}` (the agent's key) → `{handoff_id, expires_at}`; the code is mailed. */
export const handoffRoute = defineRoute({
  ...endpoint("POST /v1/agents/handoff", "startAgentHandoff", "Hand the account over to a human", "agents"),
  description:
    "With the agent's key: mails a one-time code to `email` and answers the takeover link's id. Only an account " +
    "made by POST /v1/agents/signup and not yet taken over can be handed off (else 409); at most 5 links per " +
    "account per hour (429 with Retry-After and the account's X-Usage-*).",
  request: { body: schemas.HandoffSchema },
  ...answers(schemas.HandoffResponseSchema, { status: 201, description: "The takeover link; the code is mailed." }, [
    403,
    409,
    schemas.HandoffLimitResponse,
    503,
  ]),
  async handle({ body }, call) {
    const res = await call.ctx.files.startAgentHandoff({ email: body.email }, call.rpc()).catch(usageOn429(call));
    return { status: 201, body: handoffToJson(res) };
  },
});

/** POST /v1/agents/handoff/{handoff_id}/claim `{code}` (no key) → `{account_id, api_key}`. */
export const claimRoute = defineRoute({
  ...endpoint(
    "POST /v1/agents/handoff/{handoff_id}/claim",
    "claimAgentHandoff",
    "Take over an agent's account",
    "agents",
  ),
  auth: false,
  description:
    "Needs no key. With the mailed code, the agent's account becomes the human's (same account id: documents, " +
    "sessions and usage stay) and a new key is returned. A wrong code is a 403 stating the attempts left; after " +
    "5 wrong codes the link is disabled for good (410); an unknown, expired or used link is a 404.",
  request: { params: schemas.HandoffPathSchema, body: schemas.ClaimSchema },
  ...answers(schemas.ClaimResponseSchema, "The adopted account and its new key.", [...schemas.ClaimErrors, 503]),
  async handle({ params, body }, call) {
    const res = await call.ctx.accounts.claimHandoff({ handoffId: params.handoff_id, code: body.code }, call.rpc());
    return { body: claimToJson(res) };
  },
});

/** The agents routes, in documentation order (api/index.ts mounts every area's list). */
export const agentsRoutes: Route[] = [signupRoute, handoffRoute, claimRoute];
