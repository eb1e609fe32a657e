// Rate limits (issue #13; interface-spec Errors: 429 "an endpoint cooldown", rule 2) over the real
// stack: per-key token buckets per endpoint class (and, beside each, the owner account's bucket of
// twice the size: account-limits.test.ts), kept in billing's Postgres and shared by gateway
// replicas — here one in-process gateway and one gateway child process
// (services/gateway/src/main.ts) with small limits, both on the stack's services.
import { type ChildProcess, spawn } from "node:child_process";
import { startBillingService } from "@redline/billing";
import { gatewayConfig, type RateLimitsConfig, type RunningGateway, startGateway } from "@redline/gateway";
import { freePort } from "@redline/local-infra";
import { RUNTIME_ARGS } from "@redline/local-stack";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStackWithKey } from "./support/file-stack.js";
import { REPO_ROOT, sampleContract } from "./support/fixtures.js";
import type { TestStack } from "./support/stack.js";

// read: 4 requests of burst, one token back per second; write: 5 per minute (no refill within a
// test); expensive: 30 per 10 minutes, large enough for gateways to admit early (rate-limit.ts,
// BucketMirror) until the last 10 tokens.
const LIMITS: RateLimitsConfig = {
  expensive: { capacity: 30, windowSeconds: 600 },
  write: { capacity: 5, windowSeconds: 60 },
  read: { capacity: 4, windowSeconds: 4 },
};

// These tests are about the buckets, not fail-open: on 2 loaded cores billing may take more than
// the production 500 ms to answer, and a request let through unlimited would read as a bucket bug.
const LIMITER_TIMEOUT_MS = 10_000;

let stack: TestStack;
let key: string;
let gwA: RunningGateway;
let urlB: string;
let child: ChildProcess | undefined;
const extra: { close(): Promise<void> }[] = [];

function limitedConfig(billingAddr?: string) {
  return gatewayConfig({
    port: 0,
    addrs: { ...stack.addrs, ...(billingAddr && { billing: billingAddr }) },
    logLevel: "silent",
    authCacheTtlMs: 60_000,
    rateLimits: LIMITS,
    rateLimitTimeoutMs: LIMITER_TIMEOUT_MS,
  });
}

/** Starts services/gateway/src/main.ts as a child process with LIMITS from the environment. */
async function startGatewayProcess(): Promise<string> {
  const port = await freePort();
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    PORT: String(port),
    DOCUMENTS_ADDR: stack.addrs.documents,
    SESSIONS_ADDR: stack.addrs.sessions,
    BILLING_ADDR: stack.addrs.billing,
    INGEST_ADDR: stack.addrs.ingest,
    AGENT_ADDR: stack.addrs.agent,
    LOG_LEVEL: "silent",
    RATE_LIMIT_TIMEOUT_MS: String(LIMITER_TIMEOUT_MS),
  };
  for (const [cls, policy] of Object.entries(LIMITS)) {
    env[`RATE_LIMIT_${cls.toUpperCase()}_CAPACITY`] = String(policy.capacity);
    env[`RATE_LIMIT_${cls.toUpperCase()}_WINDOW_S`] = String(policy.windowSeconds);
  }
  child = spawn(process.execPath, [...RUNTIME_ARGS.tsx, "services/gateway/src/main.ts"], {
    cwd: REPO_ROOT,
    stdio: ["ignore", "ignore", "inherit"],
    env,
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const up = await fetch(`${url}/health`).then(
      (r) => r.status > 0,
      () => false,
    );
    if (up) return url;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the gateway child process did not start within 30 s");
}

beforeAll(async () => {
  ({ stack, key } = await startStackWithKey({ name: "rate_limits" }, "rl-alice"));
  gwA = await startGateway(limitedConfig());
  urlB = await startGatewayProcess();
});
afterAll(async () => {
  if (child && child.exitCode === null) child.kill("SIGTERM");
  for (const x of extra) await x.close();
  await gwA?.close();
  await stack?.close();
});

const get = (base: string, k: string, path = "/v1/sessions") =>
  fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${k}` } });
const clearMemory = (base: string, k: string) =>
  fetch(`${base}/v1/users/me/cross-session-memory`, { method: "DELETE", headers: { Authorization: `Bearer ${k}` } });

describe("RateLimit headers on normal responses", () => {
  it("names the route's class and policy and counts down the remaining requests", async () => {
    const k = await stack.createKey("rl-headers");
    const first = await get(gwA.url, k);
    expect(first.status).toBe(200);
    // The key's policy, then its account's (ACCOUNT_LIMIT_FACTOR times the key's, same window).
    expect(first.headers.get("ratelimit-policy")).toBe('"read";q=4;w=4, "read-account";q=8;w=4');
    expect(first.headers.get("ratelimit")).toMatch(/^"read";r=3;t=[01], "read-account";r=7;t=[01]$/);
    const second = await get(gwA.url, k);
    expect(second.headers.get("ratelimit")).toMatch(/^"read";r=2;t=[12], "read-account";r=6;t=[12]$/);

    const write = await clearMemory(gwA.url, k);
    expect(write.status).toBe(200);
    expect(write.headers.get("ratelimit-policy")).toBe('"write";q=5;w=60, "write-account";q=10;w=60');
    expect(write.headers.get("ratelimit")).toMatch(/^"write";r=4;t=1[12], "write-account";r=9;t=[56]$/);
  });

  it("puts chat in the expensive class", async () => {
    const k = await stack.createKey("rl-chat");
    const res = await fetch(`${gwA.url}/v1/chat`, {
      method: "POST",
      headers: { Authorization: `Bearer ${k}`, "Content-Type": "application/json" },
      body: JSON.stringify({
        message: 'replace "Acme Corporation" with "Globex Inc"',
        document_html: sampleContract(),
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("ratelimit-policy")).toBe('"expensive";q=30;w=600, "expensive-account";q=60;w=600');
    expect(res.headers.get("ratelimit")).toMatch(/^"expensive";r=29;t=2\d, "expensive-account";r=59;t=1\d$/);
  });

  it("carries the generous defaults on the stack's own gateway, and none on public routes", async () => {
    const res = await stack.call("GET", "/v1/sessions", { key });
    expect(res.status).toBe(200);
    expect(res.headers.get("ratelimit-policy")).toBe('"read";q=6000;w=60, "read-account";q=12000;w=60');
    expect(res.headers.get("ratelimit")).toMatch(/^"read";r=5999;t=\d+, "read-account";r=11999;t=\d+$/);
    const health = await fetch(`${stack.url}/health`);
    expect(health.headers.get("ratelimit-policy")).toBeNull();
    expect(health.headers.get("ratelimit")).toBeNull();
  });
});

describe("token bucket exhaustion and refill", () => {
  it("answers the spec's JSON 429 with Retry-After and X-Usage-* once the bucket is empty, then refills", async () => {
    const k = await stack.createKey("rl-exhaust");
    for (let i = 0; i < 4; i++) expect((await get(gwA.url, k)).status).toBe(200);
    const refused = await get(gwA.url, k);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await refused.json()) as {
      detail: unknown;
      code: string;
      limiter: string;
      bucket: string;
      retry_after: number;
    };
    expect(typeof body.detail).toBe("string");
    expect(body.detail).toMatch(/Rate limit exceeded for read requests \(4 per 4 s per API key\); retry in 1 s/);
    expect(body).toMatchObject({ code: "rate_limited", limiter: "read", bucket: "key", retry_after: 1 });
    expect(refused.headers.get("retry-after")).toBe("1");
    // A fresh free-plan owner: nothing used of the 500 operations (Errors rule 2's headers).
    expect(refused.headers.get("x-usage-limit")).toBe("500");
    expect(refused.headers.get("x-usage-used")).toBe("0");
    expect(refused.headers.get("x-usage-remaining")).toBe("500");
    // The account bucket (8) still had tokens and lost none to the refusal.
    expect(refused.headers.get("ratelimit")).toMatch(/^"read";r=0;t=[34], "read-account";r=[45];t=\d$/);

    // Another key of another user is not affected.
    const other = await stack.createKey("rl-exhaust-other");
    expect((await get(gwA.url, other)).status).toBe(200);

    // One token per second comes back: after Retry-After exactly one more request passes.
    await new Promise((r) => setTimeout(r, 1100));
    expect((await get(gwA.url, k)).status).toBe(200);
    expect((await get(gwA.url, k)).status).toBe(429);
  });

  it("refuses before reading the body: a throttled write with a malformed body is a 429, not a 422", async () => {
    const k = await stack.createKey("rl-before-body");
    for (let i = 0; i < 5; i++) expect((await clearMemory(gwA.url, k)).status).toBe(200);
    const res = await fetch(`${gwA.url}/v1/sessions/init`, {
      method: "POST",
      headers: { Authorization: `Bearer ${k}`, "Content-Type": "application/json" },
      body: "{not json",
    });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("12");
  });
});

describe("shared state across two gateway processes", () => {
  it("draws one bucket through both gateways", async () => {
    const k = await stack.createKey("rl-shared");
    expect((await clearMemory(gwA.url, k)).status).toBe(200);
    expect((await clearMemory(urlB, k)).status).toBe(200);
    const onB = await clearMemory(urlB, k);
    // The child process read its policy from RATE_LIMIT_WRITE_CAPACITY / _WINDOW_S.
    expect(onB.headers.get("ratelimit-policy")).toBe('"write";q=5;w=60, "write-account";q=10;w=60');
    expect(onB.headers.get("ratelimit")).toMatch(/^"write";r=2;/);
    expect((await clearMemory(gwA.url, k)).status).toBe(200);
    expect((await clearMemory(urlB, k)).status).toBe(200);
    const refusedA = await clearMemory(gwA.url, k);
    const refusedB = await clearMemory(urlB, k);
    expect([refusedA.status, refusedB.status]).toEqual([429, 429]);
    expect(refusedB.headers.get("retry-after")).toMatch(/^1[12]$/);
  });

  it("lets exactly `capacity` of many concurrent requests through, split across both gateways", async () => {
    const k = await stack.createKey("rl-race");
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) => clearMemory(i % 2 === 0 ? gwA.url : urlB, k).then((r) => r.status)),
    );
    expect(results.filter((s) => s === 200)).toHaveLength(5);
    expect(results.filter((s) => s === 429)).toHaveLength(11);
  });
});

describe("early admission far from the limit", () => {
  it("stops within the strict zone past `capacity` across both gateways, each refusing from its first refusal on", async () => {
    const k = await stack.createKey("rl-early");
    // An expensive route refused cheaply after its token is taken: an export of an empty body is a 422.
    const exportEmpty = (base: string) =>
      fetch(`${base}/v1/documents/export`, {
        method: "POST",
        headers: { Authorization: `Bearer ${k}`, "Content-Type": "application/json" },
        body: "{}",
      });
    const statuses: number[] = [];
    for (let i = 0; i < 45; i++) statuses.push((await exportEmpty(i % 2 === 0 ? gwA.url : urlB)).status);
    expect(statuses.every((s) => s === 422 || s === 429)).toBe(true);
    const admitted = statuses.filter((s) => s === 422).length;
    // Each gateway admits early only while its last word from billing leaves more than the
    // strict zone (max(10, 10 %)); what the other replica took meanwhile is the only overshoot
    // possible, and it is owed to the bucket (BucketMirror): at most the strict zone per other
    // replica, reached when neither hears of the other's admissions before its own view runs out.
    expect(admitted).toBeGreaterThanOrEqual(30);
    expect(admitted).toBeLessThanOrEqual(30 + 10);
    // A replica's first refusal is final for it: no later (or late) answer undoes it. The other
    // replica may still admit on its own last word, under a second old, until it asks again.
    for (const replica of [0, 1]) {
      const own = statuses.filter((_, i) => i % 2 === replica);
      const first = own.indexOf(429);
      expect(first, `replica ${replica} refused`).toBeGreaterThan(0);
      expect(
        own.slice(first).every((s) => s === 429),
        `replica ${replica} after its first 429: ${own}`,
      ).toBe(true);
    }
    // Once the debits are in, the bucket is empty for both.
    await new Promise((r) => setTimeout(r, 200));
    expect((await exportEmpty(gwA.url)).status).toBe(429);
    expect((await exportEmpty(urlB)).status).toBe(429);
  });
});

describe("ConsumeRateLimit debits (billing)", () => {
  it("records early admissions unconditionally and makes the next requests wait off the debt", async () => {
    const principal = (await stack.accounts.resolveApiKey({ apiKey: await stack.createKey("rl-debit") })).principal;
    const buckets = [{ subject: "debit-test", limiter: "write", capacity: 5, windowSeconds: 50 }];
    const debit = await stack.edgePolicy.consumeRateLimit({ buckets, debit: 7 }, { principal });
    expect(debit).toMatchObject({ allowed: true, buckets: [{ remaining: 0, exhausted: false }] });
    const next = await stack.edgePolicy.consumeRateLimit({ buckets, debit: 0 }, { principal });
    expect(next.allowed).toBe(false);
    expect(next.buckets[0].exhausted).toBe(true);
    // 2 tokens owed + 1 to take, at 0.1 token/s: about 30 s.
    expect(next.retryAfterSeconds).toBeGreaterThan(29);
    expect(next.retryAfterSeconds).toBeLessThanOrEqual(30);
    expect(next.usage).toMatchObject({ monthlyLimit: 500, monthlyUsed: 0 });
    await expect(stack.edgePolicy.consumeRateLimit({ buckets, debit: -1 }, { principal })).rejects.toMatchObject({
      httpStatus: 400,
    });
  });
});

describe("failure policy", () => {
  it("fails open when the limiter's store is unreachable: the request passes without a RateLimit header", async () => {
    // A gateway whose billing (the limiter's store) is a separate billing process we can stop,
    // on the stack's database; the key resolved before the stop stays in the auth cache.
    const billing = await startBillingService({
      grpcAddress: "127.0.0.1:0",
      databaseUrl: stack.databaseUrl,
      logLevel: "silent",
    });
    // The production deadline: what this test is about.
    const gw = await startGateway({ ...limitedConfig(billing.address), rateLimitTimeoutMs: 500 });
    extra.push(gw);
    const k = await stack.createKey("rl-fail-open");
    const before = await get(gw.url, k);
    expect(before.status).toBe(200);
    expect(before.headers.get("ratelimit")).toMatch(/^"read";r=3;/);
    await billing.close();
    for (let i = 0; i < 6; i++) {
      const res = await get(gw.url, k);
      expect(res.status).toBe(200);
      expect(res.headers.get("ratelimit-policy")).toBe('"read";q=4;w=4, "read-account";q=8;w=4');
      expect(res.headers.get("ratelimit")).toBeNull();
    }
  });
});
