// SSRF guard of outbound webhooks (docs/security.md, Webhooks): a target URL is checked, its host
// resolved, and every address it resolves to must be public unicast; the delivery then connects to
// the checked address (send.ts), so a DNS answer that changes between check and connect (DNS
// rebinding) cannot redirect it. WEBHOOK_ALLOW_PRIVATE=1 lifts the address rule and allows http.

import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { WEBHOOK_LIMITS } from "@redline/event-contracts";
import ipaddr from "ipaddr.js";

/** An address a delivery may connect to. */
export interface CheckedTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

/** Why a target is refused; `reason` is shown to the caller (create) or logged (delivery). */
export class RefusedTargetError extends Error {}

/**
 * The ipaddr.js range of `ip` when it is one a webhook may not reach (private, loopback,
 * link-local incl. the 169.254.169.254 metadata address, unique-local incl. fd00:ec2::254,
 * CGNAT incl. 100.100.100.200, multicast, reserved, unspecified, broadcast, and IPv6 forms that
 * embed an IPv4 address), or null for public unicast. IPv4-mapped IPv6 is judged as its IPv4.
 */
export function refusedRange(ip: string): string | null {
  const parsed = ipaddr.process(ip);
  const range = parsed.range();
  return range === "unicast" ? null : range;
}

/**
 * Checks a target URL's form: absolute http(s), no credentials, at most WEBHOOK_LIMITS.urlChars; https
 * unless `allowPrivate`. Throws RefusedTargetError naming the rule.
 */
export function checkUrlForm(raw: string, allowPrivate: boolean): URL {
  if (raw.length > WEBHOOK_LIMITS.urlChars)
    throw new RefusedTargetError(`URL longer than ${WEBHOOK_LIMITS.urlChars} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RefusedTargetError("not an absolute URL");
  }
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:"))
    throw new RefusedTargetError(allowPrivate ? "URL must be http or https" : "URL must use https");
  if (url.username || url.password) throw new RefusedTargetError("URL must not carry credentials");
  return url;
}

/**
 * Resolves `url`'s host (all addresses) and returns the first one, refusing the target when any
 * address is not public unicast (a name with one private address is refused whole: which one a
 * client would get is the resolver's choice), unless `allowPrivate`. Throws RefusedTargetError.
 */
export async function resolveTarget(url: URL, allowPrivate: boolean): Promise<CheckedTarget> {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  let addresses: { address: string; family: number }[];
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await lookup(host, { all: true, verbatim: true });
    } catch {
      throw new RefusedTargetError(`host ${host} does not resolve`);
    }
  }
  if (addresses.length === 0) throw new RefusedTargetError(`host ${host} does not resolve`);
  if (!allowPrivate)
    for (const a of addresses) {
      const range = refusedRange(a.address);
      if (range) throw new RefusedTargetError(`host ${host} resolves to a ${range} address (${a.address})`);
    }
  const first = addresses[0];
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}
