// The operations quota through the real billing service on a real database: charge keys billed
// once under concurrent retries, refused reservations writing nothing, settles capped at the
// limit on hard-stop plans (interface-spec Limits; unshown-parts.md Accounts).
import { SCHEMA, startBillingService } from "@redline/billing";
import { accountsV1, billingV1 } from "@redline/grpc-stubs";
import { createTestDatabase } from "@redline/local-infra";
import { createDb, createRpcClient, type Knex, RedlineError, type RpcClient } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

type Principal = accountsV1.Principal;

let billing: { address: string; close(): Promise<void> };
let client: RpcClient<typeof billingV1.BillingServiceService>;
let accounts: RpcClient<typeof accountsV1.AccountsServiceService>;
let db: Knex;

beforeAll(async () => {
  const databaseUrl = await createTestDatabase(inject("infra").databaseUrl, "billing-quota");
  billing = await startBillingService({ grpcAddress: "127.0.0.1:0", databaseUrl, logLevel: "silent" });
  client = createRpcClient(billingV1.BillingServiceService, billing.address);
  accounts = createRpcClient(accountsV1.AccountsServiceService, billing.address);
  db = createDb(databaseUrl, SCHEMA, 2);
});
afterAll(async () => {
  client?.close();
  accounts?.close();
  await db?.destroy();
  await billing?.close();
});

async function account(user: string, plan: string): Promise<Principal> {
  const { principal } = await accounts.createApiKey({ user, organization: "", plan });
  if (!principal) throw new Error("no principal");
  return principal;
}

const reserve = (principal: Principal, chargeKey: string, operations: number) =>
  client.reserveOperations({ chargeKey, operations }, { principal }).then((r) => r.usage);
const settle = (principal: Principal, chargeKey: string, operations: number) =>
  client.settleOperations({ chargeKey, operations }, { principal }).then((r) => r.usage);

/** The owner's rows as stored: usage per period and charges by key. */
async function rows(principal: Principal) {
  const usage = await db(`${SCHEMA}.usage_periods`).where({ owner_id: principal.ownerId }).select("ops_used");
  const charges = await db(`${SCHEMA}.charges`)
    .where({ owner_id: principal.ownerId })
    .orderBy("charge_key")
    .select("charge_key", "ops", "state");
  return { used: usage.map((u: { ops_used: number }) => u.ops_used), charges };
}

describe("ReserveOperations", () => {
  it("bills a charge key once when the same reservation is retried concurrently", async () => {
    const p = await account("retry-user", "free");
    const results = await Promise.all(Array.from({ length: 8 }, () => reserve(p, "turn-1", 3)));
    for (const usage of results) expect(usage).toMatchObject({ monthlyUsed: 3, opsCharged: 3, wasBillable: true });
    expect(await rows(p)).toEqual({ used: [3], charges: [{ charge_key: "turn-1", ops: 3, state: "reserved" }] });
  });

  it("gives exactly k of N parallel multi-operation reservations room on a hard-stop plan", async () => {
    const p = await account("parallel-user", "free");
    await reserve(p, "arrange", 493);
    const results = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => reserve(p, `turn-${i}`, 2)));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(3);
    const { used, charges } = await rows(p);
    expect(used).toEqual([499]);
    expect(charges).toHaveLength(4);
  });

  it("refuses with 429 and writes nothing: no charge row, no usage change", async () => {
    const p = await account("refused-user", "free");
    // A fresh owner asking for more than the whole limit: not even a usage row appears.
    await expect(reserve(p, "too-big", 501)).rejects.toMatchObject({ httpStatus: 429 });
    expect(await rows(p)).toEqual({ used: [], charges: [] });

    await reserve(p, "arrange", 498);
    const err = await reserve(p, "turn", 3).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RedlineError);
    const refused = err as RedlineError;
    expect(refused.httpStatus).toBe(429);
    expect(Number(refused.headers?.["Retry-After"])).toBeGreaterThan(0);
    expect(refused.headers).toMatchObject({ "X-Usage-Limit": "500", "X-Usage-Used": "498", "X-Usage-Remaining": "2" });
    expect(refused.body).toMatchObject({
      code: "quota_exhausted",
      usage: { monthly_used: 498, monthly_limit: 500, monthly_remaining: 2, quota_exhausted: true },
    });
    expect(await rows(p)).toEqual({ used: [498], charges: [{ charge_key: "arrange", ops: 498, state: "reserved" }] });
  });
});

describe("SettleOperations", () => {
  it("caps a settle above the reservation at the limit on a hard-stop plan, once", async () => {
    const p = await account("capped-user", "free");
    await reserve(p, "arrange", 495);
    await settle(p, "arrange", 495);
    await reserve(p, "turn", 2);
    const capped = await settle(p, "turn", 10);
    expect(capped).toMatchObject({ monthlyUsed: 500, opsCharged: 5, monthlyRemaining: 0, quotaExhausted: true });
    // Settled keys are final: settling again (with any count) changes nothing.
    expect(await settle(p, "turn", 10)).toMatchObject({ monthlyUsed: 500, opsCharged: 5 });
    expect(await settle(p, "turn", 0)).toMatchObject({ monthlyUsed: 500, opsCharged: 5 });
    expect((await rows(p)).used).toEqual([500]);
    // Unknown keys report usage without billing.
    expect(await settle(p, "never-reserved", 3)).toMatchObject({ monthlyUsed: 500, opsCharged: 0, wasBillable: false });
  });

  it("charges the full difference where overage is allowed, and 0 releases", async () => {
    const p = await account("pro-user", "pro");
    await reserve(p, "big", 9_999);
    expect(await settle(p, "big", 10_050)).toMatchObject({ monthlyUsed: 10_050, opsCharged: 10_050 });
    await reserve(p, "nothing-changed", 1);
    expect(await settle(p, "nothing-changed", 0)).toMatchObject({ monthlyUsed: 10_050, opsCharged: 0 });
  });

  it("bills a key once when it is settled concurrently", async () => {
    const p = await account("settle-race-user", "free");
    await reserve(p, "turn", 1);
    const results = await Promise.all(Array.from({ length: 6 }, () => settle(p, "turn", 4)));
    for (const usage of results) expect(usage).toMatchObject({ monthlyUsed: 4, opsCharged: 4 });
    expect(await rows(p)).toEqual({ used: [4], charges: [{ charge_key: "turn", ops: 4, state: "settled" }] });
  });
});
