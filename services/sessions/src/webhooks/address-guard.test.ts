// The SSRF guard with WEBHOOK_ALLOW_PRIVATE off: every private, loopback, link-local, unique-local,
// CGNAT and metadata form is refused, public unicast passes, http is refused.
import { describe, expect, it } from "vitest";
import { checkUrlForm, RefusedTargetError, refusedRange, resolveTarget } from "./address-guard.js";

describe("webhook address guard", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "linkLocal"],
    ["100.100.100.200", "carrierGradeNat"],
    ["0.0.0.0", "unspecified"],
    ["::1", "loopback"],
    ["fe80::1", "linkLocal"],
    ["fd00:ec2::254", "uniqueLocal"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:169.254.169.254", "linkLocal"],
    ["64:ff9b::a00:1", "rfc6052"],
  ])("refuses %s (%s)", (ip, range) => {
    expect(refusedRange(ip)).toBe(range);
  });

  it("passes public unicast addresses", () => {
    expect(refusedRange("93.184.216.34")).toBeNull();
    expect(refusedRange("2606:2800:220:1:248:1893:25c8:1946")).toBeNull();
  });

  it("refuses a URL naming a private address, and resolves a public one to itself", async () => {
    await expect(resolveTarget(new URL("https://127.0.0.1/hook"), false)).rejects.toThrow(/loopback/);
    await expect(resolveTarget(new URL("https://[::1]:8443/hook"), false)).rejects.toThrow(/loopback/);
    await expect(resolveTarget(new URL("https://169.254.169.254/latest"), false)).rejects.toThrow(/linkLocal/);
    await expect(resolveTarget(new URL("https://localhost/hook"), false)).rejects.toThrow(RefusedTargetError);
    const target = await resolveTarget(new URL("https://93.184.216.34/hook"), false);
    expect(target).toMatchObject({ address: "93.184.216.34", family: 4 });
  });

  it("allows private targets with WEBHOOK_ALLOW_PRIVATE=1", async () => {
    const target = await resolveTarget(new URL("http://127.0.0.1:9/hook"), true);
    expect(target).toMatchObject({ address: "127.0.0.1", family: 4 });
  });

  it("checks the URL's form", () => {
    expect(() => checkUrlForm("http://example.com/hook", false)).toThrow(/https/);
    expect(checkUrlForm("http://example.com/hook", true).protocol).toBe("http:");
    expect(() => checkUrlForm("ftp://example.com/", true)).toThrow(/http or https/);
    expect(() => checkUrlForm("not a url", false)).toThrow(/absolute URL/);
    expect(() => checkUrlForm("https://u:p@example.com/", false)).toThrow(/credentials/);
    expect(checkUrlForm("https://example.com/hook", false).hostname).toBe("example.com");
  });
});
