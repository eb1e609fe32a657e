// The unit of every per-source limit (agent sign-ups in billing, failed keys and keyless requests
// in the gateway): the client's address as req.ip gives it (TRUST_PROXY-aware), normalized so
// that one client cannot count as many. An IPv4 address is one client (as given); an IPv4-mapped
// IPv6 address (::ffff:a.b.c.d, what a dual-stack socket reports for IPv4 peers) is that IPv4
// address; an IPv6 address counts as its /64, because one end site (a home, a VPS) is routinely
// handed a whole /64 and can use any of its 2^64 addresses, so a limit per exact address would be
// no limit at all (RFC 6177, RFC 7934: a /64 per subscriber or host is the norm).
import type { Request } from "express";
import ipaddr from "ipaddr.js";

/** What an unparseable address counts as: one shared source, so garbage can never escape the limits. */
export const UNKNOWN_SOURCE = "unknown";

/** Bits of an IPv6 address that name its end site (the limit's unit). */
const IPV6_SOURCE_PREFIX_BITS = 64;

/**
 * `address` as a per-source key: "203.0.113.7" for IPv4 (also from "::ffff:203.0.113.7"), the
 * compressed /64 for IPv6 ("2001:db8:1:2:aaaa::1" and "2001:db8:1:2::%eth0" → "2001:db8:1:2::/64";
 * a zone id names an interface of the server, not the client, and is dropped), UNKNOWN_SOURCE for
 * anything else (empty, a name, IPv4 in a shortened or octal form that no socket reports). Never throws.
 */
export function sourceOf(address: string | undefined): string {
  const raw = address?.trim() ?? "";
  if (ipaddr.IPv4.isValidFourPartDecimal(raw)) return ipaddr.IPv4.parse(raw).toString();
  if (!ipaddr.IPv6.isValid(raw)) return UNKNOWN_SOURCE;
  const v6 = ipaddr.IPv6.parse(raw);
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  const words = IPV6_SOURCE_PREFIX_BITS / 16;
  const prefix = new ipaddr.IPv6(v6.parts.map((part, i) => (i < words ? part : 0)));
  return `${prefix.toString()}/${IPV6_SOURCE_PREFIX_BITS}`;
}

/** The request's per-source key: sourceOf the client's address (req.ip, TRUST_PROXY-aware; else the TCP peer). */
export function clientSource(req: Request): string {
  return sourceOf(req.ip ?? req.socket.remoteAddress);
}
