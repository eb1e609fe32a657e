// Agent sign-up and takeover (unshown-parts.md, Accounts: agent takeover; interface-spec
// Authentication rule 5, Errors 403/404/410).
import { z } from "zod";
import { MAX_KEY_NAME_CHARS } from "../api-keys/schemas.js";
import { component, ErrorSchema, emailAddress, MAX_ID_CHARS } from "../shared/schemas.js";

/** POST /v1/agents/signup body: optional (no body, or `{}`, or `{name}`). */
export const SignupObjectSchema = component("AgentSignupRequest", {
  name: z
    .string()
    .trim()
    .max(MAX_KEY_NAME_CHARS)
    .nullish()
    .meta({ description: "A label for the agent (at most 100 characters); it names the first key." }),
});

/** The sign-up body, which may be left out. */
export const SignupSchema = SignupObjectSchema.optional().meta({ description: "Optional: `{name?}`." });

/** POST /v1/agents/signup response. */
export const SignupResponseSchema = component("AgentSignup", {
  account_id: z.string().meta({ description: "The new account's id; it stays the same after a takeover." }),
  api_key: z.string().meta({ description: "The account's key (sk_ + 32 hex), shown only here." }),
  plan: z.string().meta({ description: "The account's plan: free." }),
});

/** POST /v1/agents/handoff body. */
export const HandoffSchema = component("AgentHandoffRequest", {
  email: emailAddress.meta({ format: "email", description: "The human's address; the one-time code is mailed there." }),
});

/** POST /v1/agents/handoff response. */
export const HandoffResponseSchema = component("AgentHandoff", {
  handoff_id: z.string().meta({ description: "The takeover link: POST /v1/agents/handoff/{handoff_id}/claim." }),
  expires_at: z.string().meta({ format: "date-time", description: "When the link expires (30 minutes)." }),
});

/** Path of /v1/agents/handoff/{handoff_id}/claim. */
export const HandoffPathSchema = z.object({
  handoff_id: z.string().min(1).max(MAX_ID_CHARS).meta({ description: "The takeover link's id." }),
});

/** POST /v1/agents/handoff/{handoff_id}/claim body. */
export const ClaimSchema = component("AgentClaimRequest", {
  code: z.string().trim().min(1).max(64).meta({ description: "The one-time code from the mail." }),
});

/** POST /v1/agents/handoff/{handoff_id}/claim response. */
export const ClaimResponseSchema = component("AgentClaim", {
  account_id: z.string().meta({ description: "The adopted account: the agent's account id, unchanged." }),
  api_key: z.string().meta({ description: "A new key of the account for the human (sk_ + 32 hex), shown only here." }),
});

/** 429 of the sign-up: `{detail, code: "signup_limit"}` (or `anonymous_rate_limited`) with Retry-After. */
export const SignupLimitResponse = {
  status: 429,
  description:
    'Too many sign-ups from this source address (an IPv6 address counts as its /64) this hour (AGENT_SIGNUPS_PER_HOUR): `{detail, code: "signup_limit"}` ' +
    'with a Retry-After header (seconds) and X-Usage-* of the free account a sign-up makes (nothing used); or too many keyless requests from it this minute: `{detail, code: "anonymous_rate_limited", retry_after}`.',
  schema: ErrorSchema,
};

/** 403 of the sign-up called from a web page. */
export const BrowserOriginResponse = {
  status: 403,
  description:
    'The request carries an Origin header (a web page): `{detail, code: "browser_origin"}`; nothing is created.',
  schema: ErrorSchema,
};

/** 429 of the handoff: `{detail, code: "handoff_limit"}` with Retry-After. */
export const HandoffLimitResponse = {
  status: 429,
  description:
    'Too many takeover links of this account in the last hour: `{detail, code: "handoff_limit"}` with a ' +
    "Retry-After header (seconds) and the account's X-Usage-* headers.",
  schema: ErrorSchema,
};

/** The claim's 403, 404 and 410 (interface-spec Authentication rule 5 and Errors). */
export const ClaimErrors = [
  { status: 403, description: "Wrong code; the detail states the attempts left.", schema: ErrorSchema },
  { status: 404, description: "Unknown or expired takeover link (or one already used).", schema: ErrorSchema },
  {
    status: 410,
    description: "The link is disabled for good after too many wrong codes, even for the right one.",
    schema: ErrorSchema,
  },
];
