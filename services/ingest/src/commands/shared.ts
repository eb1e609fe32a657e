// Helpers every files command uses: ids, size refusals, time bounds, public links (storage
// presence, the 503, is storage.ts's requireStorage).
import { PayloadTooLargeError } from "@redline/service-kit";
import type { IngestContext } from "../context.js";

/** A new id: prefix + 32 hex characters. */
export function newId(prefix: string): string {
  return `${prefix}_${crypto.randomUUID().replaceAll("-", "")}`;
}

const MB = 1024 * 1024;
const toMb = (n: number) => Math.round((n / MB) * 100) / 100;

/** Throws the 413 request_too_large error (Errors rule 5) when `bytes` exceeds `maxBytes`. */
export function checkSize(
  ctx: Pick<IngestContext, "supportEmail">,
  bytes: number,
  maxBytes: number,
  requestId: string,
) {
  if (bytes > maxBytes) throw new PayloadTooLargeError(toMb(bytes), toMb(maxBytes), ctx.supportEmail, requestId);
}

/**
 * A time bound in ms: `limitMs`, cut so the answer leaves `marginMs` before the caller's
 * `deadline` (a bound past the deadline would turn a clear refusal into a gateway timeout).
 */
export function timeBound(limitMs: number, deadline: Date | null | undefined, marginMs: number): number {
  if (!deadline) return limitMs;
  return Math.max(1, Math.min(limitMs, deadline.getTime() - Date.now() - marginMs));
}

/**
 * A pre-signed URL on the public endpoint's origin. The store signs links for that endpoint
 * already (createObjectStore's publicEndpoint: SigV4 signs the Host), so this only guards
 * against a link signed elsewhere; a rewritten host would fail the signature check.
 */
export function publicUrl(ctx: Pick<IngestContext, "publicS3Endpoint">, url: string): string {
  if (!ctx.publicS3Endpoint) return url;
  const u = new URL(url);
  const p = new URL(ctx.publicS3Endpoint);
  u.protocol = p.protocol;
  u.host = p.host;
  return u.toString();
}
