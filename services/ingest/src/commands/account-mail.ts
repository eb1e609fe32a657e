// The mails of account codes: an agent takeover's one-time code (unshown-parts.md, Accounts:
// "one-time code by mail") and an email verification code (issue #30). Ingest owns outgoing
// mail, so it runs these workflows: billing opens the link or the verification and hands back
// the code once, ingest mails it and keeps nothing. The texts are fixed; nothing in them is the
// caller's but the code and ids billing made.
import type { accountsV1 } from "@redline/grpc-stubs";
import { type CallOpts, required, UnavailableError } from "@redline/service-kit";
import type { IngestContext } from "../context.js";

/** The subject of every takeover mail. */
export const HANDOFF_SUBJECT = "Your Redline account takeover code";
/** The subject of every verification mail. */
export const VERIFICATION_SUBJECT = "Your Redline email verification code";

function accountsOf(ctx: IngestContext) {
  if (!ctx.accounts) throw new UnavailableError("Billing is not configured for the ingest service (BILLING_ADDR)");
  return ctx.accounts;
}

/** Mails `lines` as text and as escaped paragraphs; UnavailableError (503) when the mail server refuses. */
async function mailLines(ctx: IngestContext, to: string, subject: string, lines: string[], what: string) {
  const text = lines.join("\n");
  const html = lines
    .map((line) => `<p>${line.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")}</p>`)
    .join("");
  try {
    await ctx.mailer.send({ to, subject, text, html });
  } catch (err) {
    ctx.log.warn({ err: err instanceof Error ? err.message : String(err) }, `${what} mail not sent`);
    throw new UnavailableError(`The ${what} code could not be mailed; try again shortly`);
  }
}

/**
 * Opens a takeover link of the caller's agent account (billing CreateHandoff: 400 malformed
 * address, 409 not an agent account) and mails its code to the address. UnavailableError (503)
 * without billing or when the mail server refuses; the link then stays unused until it expires.
 */
export async function startAgentHandoff(
  ctx: IngestContext,
  fwd: CallOpts,
  email: string,
): Promise<{ handoffId: string; expiresAt: Date }> {
  const link = await accountsOf(ctx).createHandoff({ email }, fwd);
  const expiresAt = required(link.expiresAt, "expires_at");
  await mailLines(
    ctx,
    link.email,
    HANDOFF_SUBJECT,
    [
      "An AI agent asked to hand its Redline account over to this address.",
      "",
      `Takeover link: ${link.handoffId}`,
      `One-time code: ${link.code}`,
      `Valid until: ${expiresAt.toISOString()}`,
      "",
      `To adopt the account, send POST /v1/agents/handoff/${link.handoffId}/claim with {"code": "${link.code}"}.`,
      "You get a key of the account; its documents and sessions stay with it, and the agent's keys stop working.",
      "If you did not expect this mail, ignore it: the code expires unused.",
    ],
    "takeover",
  );
  return { handoffId: link.handoffId, expiresAt };
}

/**
 * PATCH /v1/users/me `{email}`: sets the caller's email on file through billing (SetUserEmail:
 * 400 malformed, 403 an agent's key, 429 verification_limit) and mails the verification code it
 * returns, if any (none for a cleared email or the same verified one). UnavailableError (503)
 * without billing or when the mail server refuses: the email then stays unverified, and setting
 * it again sends a new code.
 */
export async function updateUserEmail(
  ctx: IngestContext,
  fwd: CallOpts,
  email: string,
): Promise<{ account: accountsV1.UserAccount; verificationExpiresAt?: Date }> {
  const res = await accountsOf(ctx).setUserEmail({ email }, fwd);
  const account = required(res.account, "account");
  const verification = res.verification;
  if (!verification) return { account };
  const expiresAt = required(verification.expiresAt, "expires_at");
  await mailLines(
    ctx,
    verification.email,
    VERIFICATION_SUBJECT,
    [
      "Someone set this address as the email of a Redline account.",
      "",
      `Verification code: ${verification.code}`,
      `Valid until: ${expiresAt.toISOString()}`,
      "",
      `To confirm it is yours, send POST /v1/users/me/email/verify with {"code": "${verification.code}"} using that account's key.`,
      "Until then the address identifies nobody: no invitation or mailed export goes by it.",
      "If you did not expect this mail, ignore it: the code expires unused.",
    ],
    "verification",
  );
  return { account, verificationExpiresAt: expiresAt };
}
