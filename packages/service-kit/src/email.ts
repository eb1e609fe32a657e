// One rule for the email addresses Redline stores (an account's email on file, in billing) and
// mails to (email exports, in ingest), so an address one service accepts the other can use.

/** Longest address accepted (RFC 5321 path limit). */
export const MAX_EMAIL_CHARS = 254;

// One plain address: no display name, comma, angle bracket or quote that a mailer could read as more.
const EMAIL =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z][A-Za-z0-9-]{0,62}$/;

/**
 * True when `value` is one plain address `local@domain.tld` of at most MAX_EMAIL_CHARS: no
 * display name, list, comment, quotes or whitespace (callers trim first). Linear time.
 */
export function isEmailAddress(value: string): boolean {
  return value.length <= MAX_EMAIL_CHARS && EMAIL.test(value);
}
