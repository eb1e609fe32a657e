// One-time codes mailed to a person (a takeover link, an email verification): 8 digits, stored
// only as a salted scrypt hash, compared in constant time, at most MAX_CODE_ATTEMPTS wrong tries.
import { randomInt, scrypt, timingSafeEqual } from "node:crypto";
import { promisify } from "node:util";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { RedlineError } from "@redline/service-kit";

/** Wrong codes a link or verification takes; the last one disables it for good (410). */
export const MAX_CODE_ATTEMPTS = 5;
const CODE_DIGITS = 8;

const scryptAsync = promisify(scrypt) as (password: string, salt: string, keylen: number) => Promise<Buffer>;

/** A new code: CODE_DIGITS decimal digits, leading zeros kept. */
export function newCode(): string {
  return String(randomInt(0, 10 ** CODE_DIGITS)).padStart(CODE_DIGITS, "0");
}

/** The stored form of `code`, salted with the id of what it unlocks: hex scrypt. */
export async function hashCode(id: string, code: string): Promise<string> {
  return (await scryptAsync(code, id, 32)).toString("hex");
}

/** Whether `given` (trimmed) is the code whose hash was stored for `id`; constant-time. */
export async function codeMatches(id: string, storedHash: string, given: string): Promise<boolean> {
  const expected = Buffer.from(storedHash, "hex");
  const actual = Buffer.from(await hashCode(id, given.trim()), "hex");
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** The 403 detail of a wrong code: the attempts left (interface-spec Authentication rule 5). */
export function wrongCodeDetail(attempts: number): string {
  const left = MAX_CODE_ATTEMPTS - attempts;
  return `Wrong code: ${left} attempt${left === 1 ? "" : "s"} left`;
}

/**
 * 429 `{detail, code}` with Retry-After: an account past the mails of one kind it may ask for in
 * an hour (`what`: "verification mails", "takeover links"), so a code route cannot mail-bomb.
 */
export class MailLimitError extends RedlineError {
  constructor(code: string, what: string, perHour: number, retryAfterSeconds: number) {
    super(
      429,
      GrpcStatus.RESOURCE_EXHAUSTED,
      `Too many ${what}: at most ${perHour} per hour per account. Retry after ${retryAfterSeconds} seconds.`,
      { body: { code }, headers: { "Retry-After": String(retryAfterSeconds) } },
    );
  }
}

/** 410: a code disabled for good after MAX_CODE_ATTEMPTS wrong ones (`detail` says what to do next). */
export class CodeDisabledError extends RedlineError {
  constructor(detail: string) {
    super(410, GrpcStatus.FAILED_PRECONDITION, detail);
  }
}
