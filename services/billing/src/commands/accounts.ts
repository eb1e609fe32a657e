// The caller's user account as the API shows it (GET and PATCH /v1/users/me, POST
// /v1/users/me/email/verify): its ids and the email on file. "Me" is the key's user, also for
// organization keys: the email belongs to a person, not to the organization.
//
// An email identifies a person only once proven (issue #30): setting one stores it unverified and
// returns a one-time code for ingest to mail; the code coming back sets email_verified_at. Until
// then nothing reads the address as the user's (invitations, email exports without a recipient),
// so typing someone else's address gains nothing. An agent's key never sets the email: the human
// who takes the account over sets it, through the takeover's own mailed code.
import { randomUUID } from "node:crypto";
import {
  ForbiddenError,
  InputError,
  isEmailAddress,
  type Knex,
  NotFoundError,
  type Principal,
} from "@redline/service-kit";
import { findAccount, lockAccountById, markEmailVerified, setAccountEmail } from "../db/store/accounts.js";
import { recordWrongCode } from "../db/store/codes.js";
import {
  closeOpenVerifications,
  insertVerification,
  latestOpenVerificationForUpdate,
  markVerificationUsed,
  recentVerifications,
} from "../db/store/email-verifications.js";
import { type AccountRow, TABLES } from "../db/tables.js";
import { agentKeyRefusal, callerKey } from "./api-keys.js";
import {
  CodeDisabledError,
  codeMatches,
  hashCode,
  MAX_CODE_ATTEMPTS,
  MailLimitError,
  newCode,
  wrongCodeDetail,
} from "./codes.js";

/** How long a verification code lives (ms). */
export const VERIFICATION_TTL_MS = 60 * 60 * 1000;
/** Verification mails one account may cause per rolling hour: each goes to an address the caller typed. */
export const MAX_VERIFICATIONS_PER_HOUR = 5;
const HOUR_MS = 60 * 60 * 1000;

/** A user account: ids of the principal, the email on file ("" when none) and when it was verified. */
export interface UserAccountView {
  userId: string;
  organizationId: string;
  email: string;
  /** Absent while the email is unverified (or there is none). */
  emailVerifiedAt?: Date;
}

/** A code for ingest to mail, in clear; only its hash is stored. */
export interface VerificationToMail {
  verificationId: string;
  code: string;
  email: string;
  expiresAt: Date;
}

/** 429 verification_limit: too many verification mails this hour. */
function verificationLimit(retryAfterSeconds: number): MailLimitError {
  return new MailLimitError("verification_limit", "verification mails", MAX_VERIFICATIONS_PER_HOUR, retryAfterSeconds);
}

/** 410: a verification disabled for good; setting the email again sends a new one. */
function verificationDisabled(): CodeDisabledError {
  return new CodeDisabledError(
    `This verification code is disabled after ${MAX_CODE_ATTEMPTS} wrong codes; set the email again (PATCH /v1/users/me) for a new one`,
  );
}

function view(principal: Principal, row: AccountRow): UserAccountView {
  return {
    userId: principal.userId,
    organizationId: principal.organizationId,
    email: row.email ?? "",
    ...(row.email && row.email_verified_at ? { emailVerifiedAt: row.email_verified_at } : {}),
  };
}

/** The caller's user account; NotFoundError (404) when the key's user no longer exists. */
export async function getUserAccount(db: Knex, principal: Principal): Promise<UserAccountView> {
  const row = await findAccount(db, principal.userId);
  if (!row) throw new NotFoundError("Account not found");
  return view(principal, row);
}

/**
 * Sets the caller's email on file to `email` (trimmed), unverified, and returns the code to mail
 * to it; or clears it when `email` is empty. The same address already verified changes nothing
 * and mails nothing; the same address unverified gets a new code (the old one ends). InputError
 * (400) for anything but one plain address of at most 254 characters; ForbiddenError (403,
 * agent_key) for an agent's key; MailLimitError (429, verification_limit) past MAX_VERIFICATIONS_PER_HOUR;
 * NotFoundError (404) when the key's user no longer exists; 401 for a key revoked meanwhile.
 */
export async function setUserEmail(
  db: Knex,
  principal: Principal,
  email: string,
  now: Date,
): Promise<{ account: UserAccountView; verification?: VerificationToMail }> {
  const address = email.trim();
  if (address && !isEmailAddress(address))
    throw new InputError("email is not a valid email address: one plain address such as name@example.com");
  return db.transaction(async (trx) => {
    const key = await callerKey(trx, principal);
    // Locked: the mails-per-hour count and the change agree under concurrent requests.
    const account = await lockAccountById(trx, principal.userId);
    if (!account) throw new NotFoundError("Account not found");
    if (key?.agent || account.is_agent)
      throw agentKeyRefusal("set the email on file; the human who takes the account over does");
    if (!address) {
      await closeOpenVerifications(trx, account.id, now);
      const row = await setAccountEmail(trx, account.id, null, null);
      return { account: view(principal, row ?? account) };
    }
    const same = account.email?.toLowerCase() === address.toLowerCase();
    if (same && account.email_verified_at) return { account: view(principal, account) };
    const recent = await recentVerifications(trx, account.id, new Date(now.getTime() - HOUR_MS));
    if (recent.length >= MAX_VERIFICATIONS_PER_HOUR) {
      const oldest = recent[recent.length - MAX_VERIFICATIONS_PER_HOUR];
      throw verificationLimit(Math.max(1, Math.ceil((oldest.getTime() + HOUR_MS - now.getTime()) / 1000)));
    }
    await closeOpenVerifications(trx, account.id, now);
    const row = await setAccountEmail(trx, account.id, address, null);
    const verificationId = randomUUID();
    const code = newCode();
    const expiresAt = new Date(now.getTime() + VERIFICATION_TTL_MS);
    await insertVerification(trx, {
      id: verificationId,
      account_id: account.id,
      email: address,
      code_hash: await hashCode(verificationId, code),
      expires_at: expiresAt,
      created_at: now,
    });
    return {
      account: view(principal, row ?? account),
      verification: { verificationId, code, email: address, expiresAt },
    };
  });
}

/**
 * POST /v1/users/me/email/verify `{code}`: proves the email on file with the code mailed to it.
 * NotFoundError (404) when no code is pending (none sent, expired, used, or the email changed
 * since); CodeDisabledError (410) once disabled, even with the right code; ForbiddenError
 * (403) for a wrong code, its detail stating the attempts left, the last wrong code answering 410.
 */
export async function verifyUserEmail(
  db: Knex,
  principal: Principal,
  code: string,
  now: Date,
): Promise<UserAccountView> {
  const pending = () => new NotFoundError("No email verification is pending: set the email (PATCH /v1/users/me) first");
  type Outcome = { wrong: number } | { account: AccountRow };
  const outcome = await db.transaction(async (trx): Promise<Outcome> => {
    const key = await callerKey(trx, principal);
    if (key?.agent) throw agentKeyRefusal("verify the email on file");
    const row = await latestOpenVerificationForUpdate(trx, principal.userId);
    if (!row) throw pending();
    if (row.disabled_at) throw verificationDisabled();
    if (row.expires_at.getTime() <= now.getTime()) throw pending();
    if (!(await codeMatches(row.id, row.code_hash, code))) {
      // Committed before the refusal is thrown, so each wrong code counts.
      return { wrong: await recordWrongCode(trx, TABLES.emailVerifications, row.id, MAX_CODE_ATTEMPTS) };
    }
    await markVerificationUsed(trx, row.id, now);
    const account = await markEmailVerified(trx, principal.userId, row.email, now);
    if (!account) throw pending();
    return { account };
  });
  if ("wrong" in outcome) {
    if (outcome.wrong >= MAX_CODE_ATTEMPTS) throw verificationDisabled();
    throw new ForbiddenError(wrongCodeDetail(outcome.wrong));
  }
  return view(principal, outcome.account);
}
