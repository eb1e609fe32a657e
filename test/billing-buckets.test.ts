// Buckets, promotions and billing cycles over the real stack (issue #13 part 1; interface-spec
// usage object, Errors and Limits): promotion codes from the admin CLI redeemed over HTTP with
// their rules, grants spent before the monthly bucket, 50 parallel chat turns against 10
// operations left across two buckets, period resets and grant expiry by moving billing's clock,
// mid-cycle plan changes, enterprise limits, Retry-After to the account's own reset, and a free
// GET /v1/usage. Billing's clock moves through SetTestClock (the stack starts it movable).
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { startBillingService } from "@redline/billing";
import { type accountsV1, billingV1 } from "@redline/grpc-stubs";
import { createRpcClient } from "@redline/service-kit";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { type Body, createSavedDocument, jsonCall } from "./support/documents-client.js";
import { startTestStack, type TestStack } from "./support/stack.js";

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack(inject("infra"), { name: "buckets" });
});
afterAll(() => stack?.close());
// Every case starts at real time, whatever the previous one did to the clock.
afterEach(() => stack.billing.setTestClock({}));

const DAY = 24 * 3600 * 1000;
const DOCUMENT = "<h1>Terms</h1><p>Acme pays within 30 days.</p>";

let users = 0;
/** A new user key on `plan`, and its principal (for arranging usage through billing). */
async function newUser(plan = "free") {
  users += 1;
  const key = await stack.createKey(`buckets-${users}`, { plan });
  const { principal } = await stack.accounts.resolveApiKey({ apiKey: key });
  if (!principal) throw new Error("no principal");
  return { key, principal };
}

/** Holds `ops` operations for the owner directly in billing (arranging a nearly spent quota). */
async function arrange(principal: accountsV1.Principal, ops: number, chargeKey = "arrange") {
  await stack.billing.reserveOperations({ chargeKey, operations: ops }, { principal });
}

/** Creates a promotion through billing's CreatePromotion (the admin CLI's RPC); its code. */
async function promotion(ops: number, expiresInDays: number, maxRedemptions = 0, name = "Launch") {
  const expiresAt = new Date(Date.now() + expiresInDays * DAY);
  return (await stack.billing.createPromotion({ name, ops, expiresAt, maxRedemptions })).code;
}

const redeem = (key: string, code: unknown) => jsonCall(stack, "POST", "/v1/promotions/redeem", key, { code });
const usage = (key: string) => jsonCall(stack, "GET", "/v1/usage", key);

/** One document-modifying chat turn (1 billable operation with the offline engine). */
async function turn(key: string) {
  const res = await stack.call("POST", "/v1/chat", {
    key,
    body: { message: 'replace "Acme" with "Zeta"', document_html: DOCUMENT },
  });
  return { res, body: (await res.json()) as Body };
}

/** The account of an operator command, by id or by user name. */
const byId = (accountId: string) => ({ accountId, user: "", organization: "" });
const byUser = (user: string) => ({ accountId: "", user, organization: "" });
/** Operator commands, as `admin accounts set-plan / set-limit` send them. */
const setPlan = (account: billingV1.AccountRef, plan: string) =>
  stack.billing.setAccountPlan({ account, plan, anchorDay: 0 });
const setLimit = (account: billingV1.AccountRef, monthlyLimit: number) =>
  stack.billing.setAccountLimit({ account, monthlyLimit });

/** Moves billing's clock to `at` (it keeps ticking from there). */
const moveClock = (at: Date) => stack.billing.setTestClock({ now: at });

describe("promotion codes", () => {
  it("are printed alone by the admin CLI and redeemed once per account, case-insensitively", async () => {
    const expires = new Date(Date.now() + 30 * DAY).toISOString().slice(0, 10);
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        "--import",
        "tsx",
        join(import.meta.dirname, "..", "scripts", "admin.ts"),
        "promotions",
        "create",
        "--name",
        "Welcome",
        "--ops",
        "5",
        "--expires",
        expires,
      ],
      { env: { ...process.env, BILLING_ADDR: stack.addrs.billing } },
    );
    expect(stdout).toMatch(/^[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}\n$/);
    const code = stdout.trim();

    const { key } = await newUser();
    const first = await redeem(key, code.toLowerCase());
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ bucket_used: "none", was_billable: false, ops_charged: 0, monthly_used: 0 });
    expect(first.body).not.toHaveProperty("redemption_id");
    expect(first.body.promotions).toEqual([
      {
        redemption_id: expect.any(String),
        name: "Welcome",
        ops_granted: 5,
        ops_remaining: 5,
        expires_at: `${expires}T23:59:59.999Z`,
      },
    ]);
    const again = await redeem(key, code);
    expect(again).toMatchObject({ status: 409, body: { detail: expect.stringMatching(/already redeemed/) } });
  });

  it("answer 404 unknown or expired, 409 used up, 422 without a code", async () => {
    const [a, b] = [await newUser(), await newUser()];
    expect(await redeem(a.key, "ZZZZ-ZZZZ-ZZZZ")).toMatchObject({
      status: 404,
      body: { detail: "Unknown promotion code" },
    });
    expect((await redeem(a.key, "")).status).toBe(422);
    expect((await redeem(a.key, 42)).status).toBe(422);

    const scarce = await promotion(2, 10, 1);
    expect((await redeem(a.key, scarce)).status).toBe(200);
    expect(await redeem(b.key, scarce)).toMatchObject({
      status: 409,
      body: { detail: expect.stringMatching(/used up/) },
    });

    const shortLived = await promotion(2, 1);
    await moveClock(new Date(Date.now() + 2 * DAY));
    expect(await redeem(b.key, shortLived)).toMatchObject({
      status: 404,
      body: { detail: expect.stringMatching(/expired/) },
    });
    expect((await usage(b.key)).body.promotions).toEqual([]);
  });
});

describe("buckets", () => {
  it("spend a grant before the monthly bucket and name it in usage", async () => {
    const { key } = await newUser();
    const granted = await redeem(key, await promotion(1, 10, 0, "One free turn"));
    const redemptionId = granted.body.promotions[0].redemption_id;

    const paid = await turn(key);
    expect(paid.res.status).toBe(200);
    expect(paid.body.usage).toMatchObject({
      bucket_used: "promotion",
      redemption_id: redemptionId,
      ops_charged: 1,
      monthly_used: 0,
      promotions: [],
    });
    expect(paid.res.headers.get("X-Usage-Used")).toBe("0");

    const monthly = await turn(key);
    expect(monthly.body.usage).toMatchObject({ bucket_used: "monthly", monthly_used: 1, ops_charged: 1 });
    expect(monthly.body.usage).not.toHaveProperty("redemption_id");
  });

  it("give exactly 10 of 50 parallel chat turns the 10 operations left across two buckets", async () => {
    const { key, principal } = await newUser();
    await arrange(principal, 494); // 6 left in the monthly bucket
    await redeem(key, await promotion(4, 10)); // + 4 in a grant
    const started = performance.now();
    const turns = await Promise.all(Array.from({ length: 50 }, () => turn(key)));
    const elapsedMs = performance.now() - started;
    const ok = turns.filter((t) => t.res.status === 200);
    const refused = turns.filter((t) => t.res.status === 429);
    expect(ok).toHaveLength(10);
    expect(refused).toHaveLength(40);
    for (const t of refused) {
      expect(Number(t.res.headers.get("Retry-After"))).toBeGreaterThan(0);
      expect(t.res.headers.get("X-Usage-Remaining")).toBe("0");
    }
    expect(ok.filter((t) => t.body.usage.bucket_used === "promotion")).toHaveLength(4);
    expect(ok.filter((t) => t.body.usage.bucket_used === "monthly")).toHaveLength(6);
    const after = await usage(key);
    expect(after.body).toMatchObject({ monthly_used: 500, quota_exhausted: true, promotions: [] });
    console.info(`50 parallel chat turns, 10 operations across two buckets: ${Math.round(elapsedMs)} ms`);
  });
});

describe("billing cycles", () => {
  it("answer a spent quota's 429 with Retry-After to the account's own reset, and reset there", async () => {
    const { key, principal } = await newUser();
    await arrange(principal, 500);
    const { body: before } = await usage(key);
    // The account was created today: its cycle is anchored on today's day of month (UTC).
    expect(new Date(before.period_start).getUTCDate()).toBe(new Date().getUTCDate());
    const refused = await turn(key);
    expect(refused.res.status).toBe(429);
    const untilReset = (Date.parse(before.period_end) - Date.now()) / 1000;
    expect(Math.abs(Number(refused.res.headers.get("Retry-After")) - untilReset)).toBeLessThan(5);
    expect(refused.res.headers.get("X-Usage-Used")).toBe("500");

    await moveClock(new Date(Date.parse(before.period_end) + 1000));
    const fresh = await turn(key);
    expect(fresh.res.status).toBe(200);
    expect(fresh.body.usage).toMatchObject({ monthly_used: 1, monthly_remaining: 499, bucket_used: "monthly" });
    const { body: next } = await usage(key);
    expect(next.period_start).toBe(before.period_end);
  });

  it("stop counting a grant once it expires", async () => {
    const { key } = await newUser();
    await redeem(key, await promotion(5, 3));
    await moveClock(new Date(Date.now() + 2 * DAY));
    expect((await turn(key)).body.usage).toMatchObject({ bucket_used: "promotion" });
    await moveClock(new Date(Date.now() + 4 * DAY));
    expect((await usage(key)).body.promotions).toEqual([]);
    expect((await turn(key)).body.usage).toMatchObject({ bucket_used: "monthly", monthly_used: 1 });
  });

  it("apply a mid-cycle plan change at once, used operations carried over", async () => {
    const { key, principal } = await newUser("plus");
    await arrange(principal, 600);
    await setPlan(byId(principal.ownerId), "free");
    expect((await usage(key)).body).toMatchObject({ monthly_used: 600, monthly_limit: 500, subscription_tier: "free" });
    expect((await turn(key)).res.status).toBe(429);
    await setPlan(byUser(`buckets-${users}`), "pro");
    expect((await turn(key)).body.usage).toMatchObject({ monthly_used: 601, monthly_limit: 10_000 });
  });

  it("give an enterprise account its custom monthly limit; other plans refuse one", async () => {
    const { key, principal } = await newUser("pro");
    const account = byId(principal.ownerId);
    await expect(setLimit(account, 50_000)).rejects.toMatchObject({ httpStatus: 400 });
    await setPlan(account, "enterprise");
    await setLimit(account, 250_000);
    expect((await usage(key)).body).toMatchObject({ monthly_limit: 250_000, subscription_tier: "enterprise" });
    await expect(setPlan(byUser("nobody-at-all"), "pro")).rejects.toMatchObject({ httpStatus: 404 });
    await expect(setPlan(account, "gold")).rejects.toMatchObject({ httpStatus: 400 });
  });

  it("keep the test clock out of reach of a billing service started without it", async () => {
    const billing = await startBillingService({
      grpcAddress: "127.0.0.1:0",
      databaseUrl: stack.databaseUrl,
      logLevel: "silent",
    });
    const client = createRpcClient(billingV1.BillingServiceService, billing.address);
    try {
      await expect(client.setTestClock({ now: new Date(0) })).rejects.toMatchObject({ httpStatus: 403 });
    } finally {
      client.close();
      await billing.close();
    }
  });
});

describe("GET /v1/usage", () => {
  it("costs nothing and shows the period, the grants and the recent charges", async () => {
    const { key } = await newUser();
    await redeem(key, await promotion(3, 10, 0, "Spring"));
    await turn(key);
    const first = await usage(key);
    const second = await stack.call("GET", "/v1/usage", { key });
    const secondBody = (await second.json()) as Body;
    expect(secondBody).toEqual(first.body);
    expect(second.headers.get("X-Usage-Used")).toBe("0");
    expect(second.headers.get("X-Usage-Limit")).toBe("500");
    expect(first.body).toMatchObject({
      monthly_used: 0,
      monthly_limit: 500,
      was_billable: false,
      ops_charged: 0,
      bucket_used: "none",
      promotions: [{ name: "Spring", ops_granted: 3, ops_remaining: 2 }],
      recent_charges: [{ ops: 1, state: "settled", bucket_used: "promotion", created_at: expect.any(String) }],
    });
    expect(Date.parse(first.body.period_end)).toBeGreaterThan(Date.parse(first.body.period_start));
    expect((await stack.call("GET", "/v1/usage")).status).toBe(401);
  });

  it("sits beside X-Usage-* headers on every billable answer (async chat, re-edit)", async () => {
    const { key } = await newUser();
    const job = await stack.call("POST", "/v1/chat/async", {
      key,
      body: { message: 'replace "Acme" with "Zeta"', document_html: DOCUMENT },
    });
    expect(job.status).toBe(202);
    expect(job.headers.get("X-Usage-Limit")).toBe("500");

    // A clash on one chunk between two sessions, resolved by a (billable) re-edit.
    const a = await createSavedDocument(stack, key, "<p>One.</p><p>Two.</p>");
    const b = await jsonCall(stack, "POST", "/v1/sessions/init", key, { document_ids: [a.documentId] });
    const chunk = [...a.html.matchAll(/data-chunk-id="([^"]+)"/g)][0][1];
    const edit = (text: string) => a.html.replace("One.", text);
    await jsonCall(stack, "POST", `/v1/sessions/${a.sessionId}/documents/${a.slotId}/save`, key, { html: edit("A.") });
    const clash = await jsonCall(
      stack,
      "POST",
      `/v1/sessions/${b.body.session_id}/documents/${a.documentId}/save`,
      key,
      {
        html: edit("B."),
      },
    );
    expect(clash.status).toBe(409);
    const reEdit = await stack.call("POST", `/v1/sessions/${b.body.session_id}/chunks/${chunk}/re-edit`, {
      key,
      body: { mode: "merge" },
    });
    expect(reEdit.status).toBe(200);
    const body = (await reEdit.json()) as Body;
    expect(reEdit.headers.get("X-Usage-Used")).toBe(String(body.usage.monthly_used));
    expect(reEdit.headers.get("X-Usage-Remaining")).toBe(String(body.usage.monthly_remaining));
  });
});
