// loadConfig's request limits: REQUEST_TIMEOUT_MS, HEADERS_TIMEOUT_MS and RATE_LIMIT_TIMEOUT_MS are read as positive
// integers, absent leaves the defaults to startGateway, anything else names the variable; and TRUST_PROXY.
import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.js";

describe("loadConfig request limits", () => {
  it("reads REQUEST_TIMEOUT_MS and HEADERS_TIMEOUT_MS", () => {
    const cfg = loadConfig({ REQUEST_TIMEOUT_MS: "1500", HEADERS_TIMEOUT_MS: "1000" });
    expect(cfg.requestTimeoutMs).toBe(1500);
    expect(cfg.headersTimeoutMs).toBe(1000);
  });

  it("leaves them unset when absent (httpServerTimeouts applies 300 s and 66 s: keep-alive test)", () => {
    const cfg = loadConfig({});
    expect(cfg.requestTimeoutMs).toBeUndefined();
    expect(cfg.headersTimeoutMs).toBeUndefined();
  });

  it("reads RATE_LIMIT_TIMEOUT_MS (unset: the limiter's 500 ms default applies)", () => {
    expect(loadConfig({ RATE_LIMIT_TIMEOUT_MS: "2000" }).rateLimitTimeoutMs).toBe(2000);
    expect(loadConfig({}).rateLimitTimeoutMs).toBeUndefined();
  });

  it("refuses a value that is not a positive integer, naming the variable", () => {
    expect(() => loadConfig({ RATE_LIMIT_TIMEOUT_MS: "-1" })).toThrow(/RATE_LIMIT_TIMEOUT_MS/);
    expect(() => loadConfig({ REQUEST_TIMEOUT_MS: "0" })).toThrow(/REQUEST_TIMEOUT_MS/);
    expect(() => loadConfig({ HEADERS_TIMEOUT_MS: "1.5" })).toThrow(/HEADERS_TIMEOUT_MS/);
  });
});

describe("loadConfig TRUST_PROXY", () => {
  it("trusts no proxy by default, nor for empty, false or 0", () => {
    for (const TRUST_PROXY of [undefined, "", "false", "0"])
      expect(loadConfig({ TRUST_PROXY }).trustProxy).toBeUndefined();
  });

  it("reads a hop count and a list of addresses, subnets and express's names", () => {
    expect(loadConfig({ TRUST_PROXY: "1" }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: "loopback, 10.0.0.0/8" }).trustProxy).toBe("loopback, 10.0.0.0/8");
  });

  it("refuses true (any client's X-Forwarded-For believed) and what is no address, naming the variable", () => {
    expect(() => loadConfig({ TRUST_PROXY: "true" })).toThrow(/TRUST_PROXY/);
    expect(() => loadConfig({ TRUST_PROXY: "the ingress" })).toThrow(/TRUST_PROXY/);
  });
});
