// The mail of an agent takeover (unshown-parts.md, Accounts: "one-time code by mail"). Ingest
// owns outgoing mail, so it runs this workflow: billing opens the link and hands back the code
// once, ingest mails it and keeps nothing. The text is fixed; nothing in it is the caller's.
import { type CallOpts, required, UnavailableError } from "@redline/service-kit";
import type { IngestContext } from "../context.js";

/** The subject of every takeover mail. */
export const HANDOFF_SUBJECT = "Your Redline account takeover code";

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
  if (!ctx.billing) throw new UnavailableError("Billing is not configured for the ingest service (BILLING_ADDR)");
  const link = await ctx.billing.createHandoff({ email }, fwd);
  const expiresAt = required(link.expiresAt, "expires_at");
  const text = [
    "An AI agent asked to hand its Redline account over to this address.",
    "",
    `Takeover link: ${link.handoffId}`,
    `One-time code: ${link.code}`,
    `Valid until: ${expiresAt.toISOString()}`,
    "",
    `To adopt the account, send POST /v1/agents/handoff/${link.handoffId}/claim with {"code": "${link.code}"}.`,
    "You get a key of the account; its documents and sessions stay with it.",
    "If you did not expect this mail, ignore it: the code expires unused.",
  ].join("\n");
  const html = text
    .split("\n")
    .map((line) => `<p>${line.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")}</p>`)
    .join("");
  try {
    await ctx.mailer.send({ to: link.email, subject: HANDOFF_SUBJECT, text, html });
  } catch (err) {
    ctx.log.warn({ err: err instanceof Error ? err.message : String(err) }, "takeover mail not sent");
    throw new UnavailableError("The takeover code could not be mailed; try again shortly");
  }
  return { handoffId: link.handoffId, expiresAt };
}
