// accounts.v1 and ingest.v1 agent messages → the AgentSignup, AgentHandoff and AgentClaim JSON.
import type { accountsV1, ingestFilesV1 } from "@redline/grpc-stubs";
import { required } from "@redline/service-kit";
import type { z } from "zod";
import { iso } from "../shared/mappers.js";
import type { ClaimResponseSchema, HandoffResponseSchema, SignupResponseSchema } from "./schemas.js";

/** The sign-up answer. */
export function signupToJson(res: accountsV1.SignUpAgentResponse): z.output<typeof SignupResponseSchema> {
  return { account_id: res.accountId, api_key: res.apiKey, plan: res.plan };
}

/** The handoff answer (never the code: it goes only by mail). */
export function handoffToJson(res: ingestFilesV1.StartAgentHandoffResponse): z.output<typeof HandoffResponseSchema> {
  return { handoff_id: res.handoffId, expires_at: required(iso(res.expiresAt), "expires_at") };
}

/** The claim answer. */
export function claimToJson(res: accountsV1.ClaimHandoffResponse): z.output<typeof ClaimResponseSchema> {
  return { account_id: res.accountId, api_key: res.apiKey };
}
