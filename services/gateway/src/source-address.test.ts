// The unit of per-source limits: IPv4 as is, IPv4-mapped IPv6 as its IPv4, IPv6 by /64, and
// anything unparseable as one shared "unknown" source.
import { describe, expect, it } from "vitest";
import { sourceOf, UNKNOWN_SOURCE } from "./source-address.js";

describe("sourceOf", () => {
  it("keeps an IPv4 address as it is", () => {
    expect(sourceOf("203.0.113.7")).toBe("203.0.113.7");
    expect(sourceOf("127.0.0.1")).toBe("127.0.0.1");
    expect(sourceOf(" 198.51.100.1 ")).toBe("198.51.100.1");
  });

  it("takes an IPv4-mapped IPv6 address for its IPv4 address, in either notation", () => {
    expect(sourceOf("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(sourceOf("::FFFF:cb00:7107")).toBe("203.0.113.7");
    expect(sourceOf("0:0:0:0:0:ffff:127.0.0.1")).toBe("127.0.0.1");
  });

  it("counts an IPv6 address as its /64, full or compressed, in any case", () => {
    const expected = "2001:db8:1:2::/64";
    for (const a of [
      "2001:0db8:0001:0002:0000:0000:0000:0001",
      "2001:db8:1:2:ffff:ffff:ffff:ffff",
      "2001:DB8:1:2:AAAA::1",
      "2001:db8:1:2::",
      "2001:db8:1:2:0:0:0:0",
    ])
      expect(sourceOf(a), a).toBe(expected);
    expect(sourceOf("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
    expect(sourceOf("2001:db8::1")).toBe("2001:db8::/64");
    expect(sourceOf("::1")).toBe("::/64");
  });

  it("drops a zone id: it names the server's interface, not the client", () => {
    expect(sourceOf("fe80::1%eth0")).toBe("fe80::/64");
    expect(sourceOf("fe80::abcd:1%2")).toBe("fe80::/64");
    expect(sourceOf("2001:db8:1:2::9%en0")).toBe("2001:db8:1:2::/64");
  });

  it("answers one shared unknown source for anything that is not an address", () => {
    for (const a of [
      undefined,
      "",
      "localhost",
      "1.2.3",
      "0x7f.0.0.1",
      "256.1.1.1",
      "1.2.3.4.5",
      "2001:db8::1::2",
      "2001:db8:1:2:3:4:5:6:7",
      "gggg::1",
      "203.0.113.7:8080",
      "[2001:db8::1]",
      "not an ip ::",
    ])
      expect(sourceOf(a), String(a)).toBe(UNKNOWN_SOURCE);
  });
});
