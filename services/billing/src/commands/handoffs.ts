// Agent accounts and their takeover (unshown-parts.md, Accounts: agent takeover; interface-spec
// Authentication rule 5 and Errors 403/404/410). An agent signs itself up for a free account;
// later it opens a takeover link for a human's email, and whoever redeems the mailed one-time
// code adopts the account. The account id never changes, so documents, sessions, jobs and usage
// (all owned by that id) stay with it and nothing is copied. Codes are stored as salted scrypt
// hashes; wrong codes are counted under a row lock, and the fifth disables the link for good.
import { randomUUID } from "node:crypto";
import { status as GrpcStatus } from "@grpc/grpc-js";
import {
  ConflictError,
  ForbiddenError,
  InputError,
  isEmailAddress,
  isUuid,
  type Knex,
  NotFoundError,
  type Principal,
  RedlineError,
} from "@redline/service-kit";
import { adoptAccount, findAccount, insertAccount } from "../db/store/accounts.js";
import { revokeAllKeysOf } from "../db/store/api-keys.js";
import { recordWrongCode } from "../db/store/codes.js";
import {
  countSignup,
  findHandoffForUpdate,
  insertHandoff,
  lockedRecentHandoffs,
  markClaimed,
} from "../db/store/handoffs.js";
import { TABLES } from "../db/tables.js";
import { callerKey, issueKey, keyName } from "./api-keys.js";
import {
  CodeDisabledError,
  codeMatches,
  hashCode,
  MAX_CODE_ATTEMPTS,
  MailLimitError,
  newCode,
  wrongCodeDetail,
} from "./codes.js";
import { PLANS } from "./plans.js";

/** Wrong codes a takeover link takes; the last one disables it for good (410). */
export const MAX_HANDOFF_ATTEMPTS = MAX_CODE_ATTEMPTS;
/** How long a takeover link lives (ms). */
export const HANDOFF_TTL_MS = 30 * 60 * 1000;
/** Default agent sign-ups per source address per hour (AGENT_SIGNUPS_PER_HOUR). */
export const DEFAULT_AGENT_SIGNUPS_PER_HOUR = 10;
/** Takeover mails one agent account may send per rolling hour: the address is the agent's choice. */
export const MAX_HANDOFFS_PER_HOUR = 5;
const HOUR_MS = 60 * 60 * 1000;
const SIGNUP_WINDOW_MS = HOUR_MS;

/**
 * 429 for a source past its agent sign-ups of the hour: JSON `{detail, code}` with Retry-After and
 * X-Usage-* (Errors rule 2). The caller has no account yet, so the usage headers are those of the
 * account a sign-up makes: the free plan's quota, nothing used.
 */
export class SignupLimitError extends RedlineError {
  constructor(perHour: number, retryAfterSeconds: number) {
    const limit = String(PLANS.free.monthlyLimit);
    super(
      429,
      GrpcStatus.RESOURCE_EXHAUSTED,
      `Too many agent sign-ups from this address: at most ${perHour} per hour. Retry after ${retryAfterSeconds} seconds.`,
      {
        body: { code: "signup_limit" },
        headers: {
          "Retry-After": String(retryAfterSeconds),
          "X-Usage-Limit": limit,
          "X-Usage-Used": "0",
          "X-Usage-Remaining": limit,
        },
      },
    );
  }
}

/** 429 handoff_limit: too many takeover links this hour. */
function handoffLimit(retryAfterSeconds: number): MailLimitError {
  return new MailLimitError("handoff_limit", "takeover links", MAX_HANDOFFS_PER_HOUR, retryAfterSeconds);
}

/** 410: a takeover link disabled for good after too many wrong codes (interface-spec Errors). */
function handoffDisabled(): CodeDisabledError {
  return new CodeDisabledError(
    `This takeover link is disabled for good after ${MAX_HANDOFF_ATTEMPTS} wrong codes; ask the agent for a new one`,
  );
}

/**
 * POST /v1/agents/signup: a new user account on the free plan marked as an agent's, and its
 * first key. At most `perHour` sign-ups per `source` (the caller's address) per fixed clock hour,
 * counted in Postgres so the cap holds across billing processes; past it SignupLimitError (429,
 * Retry-After = seconds to the next hour). InputError (400) for a name over 100 characters.
 */
export async function signUpAgent(
  db: Knex,
  input: { name?: string; source: string },
  perHour: number,
  now = new Date(),
): Promise<{ accountId: string; apiKey: string; plan: string }> {
  const label = keyName(input.name);
  const windowStart = new Date(Math.floor(now.getTime() / SIGNUP_WINDOW_MS) * SIGNUP_WINDOW_MS);
  return db.transaction(async (trx) => {
    // The increment is the lock: concurrent sign-ups from one source serialize on the row, and a
    // refused one rolls back, so only accounts actually made are counted.
    const count = await countSignup(trx, input.source || "unknown", windowStart);
    if (count > perHour) {
      const retryAfter = Math.max(1, Math.ceil((windowStart.getTime() + SIGNUP_WINDOW_MS - now.getTime()) / 1000));
      throw new SignupLimitError(perHour, retryAfter);
    }
    const id = randomUUID();
    // Account names are unique per kind; the id makes an agent's name unique whatever its label.
    await insertAccount(trx, { id, kind: "user", name: `${label ?? "agent"}-${id}`, plan: "free", is_agent: true });
    const { apiKey } = await issueKey(trx, { userId: id, organizationId: null, name: label ?? "agent", agent: true });
    return { accountId: id, apiKey, plan: "free" };
  });
}

/** A new takeover link: its id, the code in clear (for the one mail that carries it), expiry and address. */
export interface NewHandoff {
  handoffId: string;
  code: string;
  expiresAt: Date;
  email: string;
}

/**
 * POST /v1/agents/handoff: opens a takeover link of the caller's agent account for `email`.
 * InputError (400) for a malformed address; ConflictError (409) when the key is an organization
 * key or the account is not (or no longer) an agent's; MailLimitError (429 handoff_limit, Retry-After) past
 * MAX_HANDOFFS_PER_HOUR links in the last hour. Earlier open links stay valid until they expire;
 * the first one redeemed adopts the account and ends the others.
 */
export async function createHandoff(
  db: Knex,
  principal: Principal,
  email: string,
  now = new Date(),
): Promise<NewHandoff> {
  const address = email.trim();
  if (!isEmailAddress(address))
    throw new InputError("email is not a valid email address: one plain address such as name@example.com");
  await callerKey(db, principal);
  const account = await findAccount(db, principal.userId);
  if (principal.organizationId || !account?.is_agent)
    throw new ConflictError("Only an agent account (POST /v1/agents/signup) can be handed off", {
      code: "not_an_agent_account",
    });
  const handoffId = randomUUID();
  const code = newCode();
  const expiresAt = new Date(now.getTime() + HANDOFF_TTL_MS);
  const codeHash = await hashCode(handoffId, code);
  await db.transaction(async (trx) => {
    // Each link mails an address the agent chose: a cap per account keeps it from mailing anyone at will.
    const recent = await lockedRecentHandoffs(trx, account.id, new Date(now.getTime() - HOUR_MS));
    if (recent.length >= MAX_HANDOFFS_PER_HOUR) {
      const oldest = recent[recent.length - MAX_HANDOFFS_PER_HOUR];
      throw handoffLimit(Math.max(1, Math.ceil((oldest.getTime() + HOUR_MS - now.getTime()) / 1000)));
    }
    await insertHandoff(trx, {
      id: handoffId,
      account_id: account.id,
      email: address,
      code_hash: codeHash,
      expires_at: expiresAt,
      created_at: now,
    });
  });
  return { handoffId, code, expiresAt, email: address };
}

/**
 * POST /v1/agents/handoff/{id}/claim: redeems a code. The agent account becomes the human's
 * (email on file set and verified: the code reached that mailbox; agent mark cleared; same id),
 * every key the agent held is revoked (personal and organization: control passes whole, the agent
 * keeps none to revoke the human's key or change the email with), and a new personal key is
 * returned.
 * NotFoundError (404) unknown, expired or already used link (or an account taken over through
 * another link); CodeDisabledError (410) once disabled, even with the right code;
 * ForbiddenError (403) for a wrong code, its detail stating the attempts left, the last wrong
 * code answering 410.
 */
export async function claimHandoff(
  db: Knex,
  input: { handoffId: string; code: string },
  now = new Date(),
): Promise<{ accountId: string; apiKey: string }> {
  const unknown = () => new NotFoundError("Unknown or expired takeover link");
  if (!isUuid(input.handoffId)) throw unknown();
  type Outcome = { wrong: number } | { accountId: string; apiKey: string };
  const outcome = await db.transaction(async (trx): Promise<Outcome> => {
    const row = await findHandoffForUpdate(trx, input.handoffId);
    if (!row) throw unknown();
    if (row.disabled_at) throw handoffDisabled();
    if (row.claimed_at || row.expires_at.getTime() <= now.getTime()) throw unknown();
    const account = await findAccount(trx, row.account_id);
    if (!account?.is_agent) throw unknown();
    if (!(await codeMatches(row.id, row.code_hash, input.code))) {
      // Committed before the refusal is thrown, so each wrong code counts.
      const attempts = await recordWrongCode(trx, TABLES.handoffs, row.id, MAX_HANDOFF_ATTEMPTS);
      return { wrong: attempts };
    }
    await markClaimed(trx, row.id);
    await adoptAccount(trx, account.id, row.email, now);
    await revokeAllKeysOf(trx, account.id);
    const { apiKey } = await issueKey(trx, { userId: account.id, organizationId: null, name: "takeover" });
    return { accountId: account.id, apiKey };
  });
  if ("wrong" in outcome) {
    if (outcome.wrong >= MAX_HANDOFF_ATTEMPTS) throw handoffDisabled();
    throw new ForbiddenError(wrongCodeDetail(outcome.wrong));
  }
  return outcome;
}
