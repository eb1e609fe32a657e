// Issue #30 part 4, "Limits per account", over the real stack: each finding of the outside
// security test played as the attack, and refused.
//   (i)   many keys of one account multiplied its rate limit → an account bucket beside each key's;
//   (ii)  random `sk_…` keys were never limited, each a billing lookup → per-source failure gate
//         in the gateway, before billing (counted by billing's own ResolveApiKey metric);
//   (iii) agent sign-ups were counted per exact address, so a /64 had 2^64 × 10 → per /64;
//   (iv)  `Access-Control-Allow-Origin: *` let any web page sign up agents and read the keys →
//         no CORS on sign-up, and a request with Origin is 403 before anything is created.
// The test is the trusted proxy (TRUST_PROXY=loopback), so X-Forwarded-For picks each attack's
// source address; requests without it come from 127.0.0.1.
import { DEFAULT_AGENT_SIGNUPS_PER_HOUR } from "@redline/billing";
import type { RateLimitsConfig } from "@redline/gateway";
import { createDb, type Knex, metricsRegistry } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startTestStack, type TestStack } from "./support/stack.js";

// Per key: 4 reads per 10 minutes (no refill within the test); per account: 6.
const WIDE = { capacity: 1000, windowSeconds: 60 };
const PER_KEY: RateLimitsConfig = { expensive: WIDE, write: WIDE, read: { capacity: 4, windowSeconds: 600 } };
const PER_ACCOUNT: RateLimitsConfig = { expensive: WIDE, write: WIDE, read: { capacity: 6, windowSeconds: 600 } };
const AUTH_FAILURES_PER_MINUTE = 5;
// Above the sign-ups one /64 makes in (iii), so billing's hourly cap is what refuses them there.
const ANONYMOUS_PER_MINUTE = DEFAULT_AGENT_SIGNUPS_PER_HOUR + 5;

let stack: TestStack;
let billingDb: Knex;

beforeAll(async () => {
  stack = await startTestStack(inject("infra"), {
    name: "account_limits",
    trustProxy: "loopback",
    // Long enough that a key resolved before the flood in (ii) is still vouched for after it.
    authCacheTtlMs: 60_000,
    rateLimits: PER_KEY,
    accountRateLimits: PER_ACCOUNT,
    sourceLimits: { authFailuresPerMinute: AUTH_FAILURES_PER_MINUTE, anonymousPerMinute: ANONYMOUS_PER_MINUTE },
  });
  billingDb = createDb(stack.databaseUrl, "billing");
});
afterAll(async () => {
  await billingDb?.destroy();
  await stack?.close();
});

const from = (source: string, headers: Record<string, string> = {}) => ({ "X-Forwarded-For": source, ...headers });

/** How many calls of AccountsService `method` the billing process has handled here (redline_grpc_server_handled_total). */
async function accountsCalls(method: string): Promise<number> {
  const metric = metricsRegistry.getSingleMetric("redline_grpc_server_handled_total");
  if (!metric) return 0;
  const { values } = await metric.get();
  return values
    .filter((v) => v.labels.grpc_service === "redline.accounts.v1.AccountsService" && v.labels.grpc_method === method)
    .reduce((sum, v) => sum + v.value, 0);
}

describe("(i) many keys of one account share the account's bucket", () => {
  it("refuses the account past its bucket where each key alone would still admit, and the refusal costs the key nothing", async () => {
    const keys = await Promise.all([1, 2, 3].map(() => stack.createKey("limits-many-keys")));
    const statuses: number[] = [];
    // Round robin: 2 reads per key reach the account's 6 while every key has 2 of its 4 left.
    for (let round = 0; round < 2; round++) {
      for (const key of keys) statuses.push((await stack.call("GET", "/v1/sessions", { key })).status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);

    const refused = await stack.call("GET", "/v1/sessions", { key: keys[0] });
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ code: "rate_limited", limiter: "read", bucket: "account" });
    expect(body.detail).toMatch(/6 per 600 s per account, all its keys together/);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.headers.get("ratelimit-policy")).toBe('"read";q=4;w=600, "read-account";q=6;w=600');
    // Both taken or neither: the key still has the 2 tokens it had before the refusal.
    expect(refused.headers.get("ratelimit")).toMatch(/^"read";r=2;t=\d+, "read-account";r=0;t=\d+$/);
    for (const key of keys) expect((await stack.call("GET", "/v1/sessions", { key })).status).toBe(429);

    // A fourth key of the same account is no way around it; another account is not affected.
    const fourth = await stack.createKey("limits-many-keys");
    expect((await stack.call("GET", "/v1/sessions", { key: fourth })).status).toBe(429);
    const other = await stack.createKey("limits-other-user");
    expect((await stack.call("GET", "/v1/sessions", { key: other })).status).toBe(200);
  });

  it("still lets one key use its whole rate, refused then by its own bucket", async () => {
    const key = await stack.createKey("limits-one-key");
    for (let i = 0; i < 4; i++) expect((await stack.call("GET", "/v1/sessions", { key })).status).toBe(200);
    const refused = await stack.call("GET", "/v1/sessions", { key });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ code: "rate_limited", bucket: "key" });
    expect(refused.headers.get("ratelimit")).toMatch(/^"read";r=0;t=\d+, "read-account";r=2;t=\d+$/);
  });
});

describe("(ii) random keys from one source", () => {
  const attacker = "198.51.100.66";
  const randomKey = () => `sk_${crypto.randomUUID().replaceAll("-", "")}`;

  it("are refused with 429 auth_rate_limited past the failures of the minute, and billing is not asked", async () => {
    // A real client behind the same address, resolved (and cached) before the flood.
    const good = await stack.createKey("limits-neighbour");
    expect((await stack.call("GET", "/v1/users/me", { key: good, headers: from(attacker) })).status).toBe(200);

    const before = await accountsCalls("ResolveApiKey");
    for (let i = 0; i < AUTH_FAILURES_PER_MINUTE; i++) {
      const res = await stack.call("GET", "/v1/sessions", { key: randomKey(), headers: from(attacker) });
      expect(res.status).toBe(401);
    }
    expect(await accountsCalls("ResolveApiKey")).toBe(before + AUTH_FAILURES_PER_MINUTE);

    const flood = await Promise.all(
      Array.from({ length: 40 }, () =>
        stack.call("GET", "/v1/sessions", { key: randomKey(), headers: from(attacker) }),
      ),
    );
    for (const res of flood) expect(res.status).toBe(429);
    const body = (await flood[0].json()) as Record<string, unknown>;
    expect(body).toMatchObject({ code: "auth_rate_limited" });
    expect(typeof body.detail).toBe("string");
    // 5 per minute: one token back every 12 s.
    expect(Number(flood[0].headers.get("retry-after"))).toBeGreaterThan(0);
    expect(Number(flood[0].headers.get("retry-after"))).toBeLessThanOrEqual(12);
    // A missing or malformed key from there is refused the same way, and none of it reached billing.
    expect((await stack.call("GET", "/v1/sessions", { headers: from(attacker) })).status).toBe(429);
    const malformed = { ...from(attacker), Authorization: "Basic abc" };
    expect((await stack.call("GET", "/v1/sessions", { headers: malformed })).status).toBe(429);
    expect(await accountsCalls("ResolveApiKey")).toBe(before + AUTH_FAILURES_PER_MINUTE);

    // The key the cache vouches for is not affected; another source still gets its 401.
    expect((await stack.call("GET", "/v1/users/me", { key: good, headers: from(attacker) })).status).toBe(200);
    const elsewhere = await stack.call("GET", "/v1/sessions", { key: randomKey(), headers: from("198.51.100.67") });
    expect(elsewhere.status).toBe(401);
  });

  it("counts an IPv6 attacker by its /64, whatever address of it each request comes from", async () => {
    const before = await accountsCalls("ResolveApiKey");
    const statuses: number[] = [];
    for (let i = 1; i <= AUTH_FAILURES_PER_MINUTE + 3; i++) {
      const res = await stack.call("GET", "/v1/sessions", {
        key: randomKey(),
        headers: from(`2001:db8:66:1:${i.toString(16)}::${i}`),
      });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([...Array(AUTH_FAILURES_PER_MINUTE).fill(401), 429, 429, 429]);
    expect(await accountsCalls("ResolveApiKey")).toBe(before + AUTH_FAILURES_PER_MINUTE);
  });
});

describe("keyless routes from one source", () => {
  it("are limited per source before billing: a claim flood gets 429 anonymous_rate_limited", async () => {
    const source = "203.0.113.90";
    const claim = () =>
      stack.call("POST", "/v1/agents/handoff/00000000-0000-4000-8000-000000000000/claim", {
        body: { code: "12345678" },
        headers: from(source),
      });
    const before = await accountsCalls("ClaimHandoff");
    for (let i = 0; i < ANONYMOUS_PER_MINUTE; i++) expect((await claim()).status).toBe(404);
    const refused = await claim();
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ code: "anonymous_rate_limited" });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await accountsCalls("ClaimHandoff")).toBe(before + ANONYMOUS_PER_MINUTE);
    // Probes stay unlimited.
    for (let i = 0; i < 3; i++)
      expect((await fetch(`${stack.url}/health`, { headers: from(source) })).status).toBe(200);
  });
});

describe("(iii) agent sign-ups from one IPv6 /64", () => {
  it("share one hourly limit across the addresses of the /64; another /64 has its own", async () => {
    const signUp = (address: string) => stack.call("POST", "/v1/agents/signup", { body: {}, headers: from(address) });
    for (let i = 1; i <= DEFAULT_AGENT_SIGNUPS_PER_HOUR; i++) {
      const res = await signUp(`2001:db8:aa:1:${i.toString(16)}:${(i * 7).toString(16)}::${i}`);
      expect(res.status, await res.clone().text()).toBe(201);
    }
    const limited = await signUp("2001:db8:aa:1:ffff:ffff:ffff:fffe");
    expect(limited.status).toBe(429);
    expect(await limited.json()).toMatchObject({ code: "signup_limit" });
    // Billing counted the /64 it was given, once per account made.
    const windows = await billingDb("signup_windows").where({ source: "2001:db8:aa:1::/64" }).select("count");
    expect(windows.map((w) => Number(w.count))).toEqual([DEFAULT_AGENT_SIGNUPS_PER_HOUR]);

    expect((await signUp("2001:db8:aa:2::1")).status).toBe(201);
    // An IPv4-mapped address is its IPv4 address.
    expect((await signUp("::ffff:198.51.100.70")).status).toBe(201);
    expect(await billingDb("signup_windows").where({ source: "198.51.100.70" }).first()).toMatchObject({ count: 1 });
  });
});

describe("(iv) agent sign-up from a web page", () => {
  const agentAccounts = async () =>
    Number((await billingDb("accounts").where({ is_agent: true }).count({ n: "*" }))[0].n);

  it("is 403 browser_origin with no CORS headers, also as a simple text/plain POST, and creates nothing", async () => {
    const before = await agentAccounts();
    for (const origin of ["https://evil.example", "null"]) {
      const res = await fetch(`${stack.url}/v1/agents/signup`, {
        method: "POST",
        headers: from("192.0.2.44", { Origin: origin, "Content-Type": "text/plain" }),
        body: "{}",
      });
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ code: "browser_origin", detail: expect.any(String) });
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
      expect(res.headers.get("access-control-expose-headers")).toBeNull();
    }
    expect(await agentAccounts()).toBe(before);
    // The same request from a program (no Origin) signs up.
    const program = await stack.call("POST", "/v1/agents/signup", { body: {}, headers: from("192.0.2.44") });
    expect(program.status).toBe(201);
    expect(await agentAccounts()).toBe(before + 1);
  });

  it("answers its preflight without allowing anything, while other routes keep CORS", async () => {
    const preflight = (path: string) =>
      fetch(`${stack.url}${path}`, {
        method: "OPTIONS",
        headers: {
          Origin: "https://evil.example",
          "Access-Control-Request-Method": "POST",
          "Access-Control-Request-Headers": "content-type",
        },
      });
    const signup = await preflight("/v1/agents/signup");
    expect(signup.status).toBe(403);
    for (const h of ["origin", "methods", "headers", "credentials"])
      expect(signup.headers.get(`access-control-allow-${h}`)).toBeNull();
    expect(await signup.json()).toMatchObject({ code: "browser_origin" });

    const chat = await preflight("/v1/chat");
    expect(chat.status).toBe(204);
    expect(chat.headers.get("access-control-allow-origin")).toBe("*");
  });
});
