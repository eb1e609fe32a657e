// The billing process serves three proto services on one port, each bound from its own rpc/
// folder: AccountsService, BillingService and EdgePolicyService, with one health for all three.
import { accountsV1, edgePolicyV1, healthV1 } from "@redline/grpc-stubs";
import { createTestDatabase } from "@redline/local-infra";
import { type Clients, closeClients, createClients, createRpcClient, type RunningService } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startBillingService } from "./service.js";

const NAMES = ["accounts", "billing", "edgePolicy"] as const;
let running: RunningService;
let clients: Clients<(typeof NAMES)[number]>;
beforeAll(async () => {
  const databaseUrl = await createTestDatabase(inject("infra").databaseUrl, "billing_service");
  running = await startBillingService({ grpcAddress: "127.0.0.1:0", databaseUrl, logLevel: "silent" });
  clients = createClients({ billing: running.address }, NAMES);
});
afterAll(async () => {
  if (clients) closeClients(NAMES, clients);
  await running?.close();
});

describe("startBillingService", () => {
  it("answers each service's RPCs on the one address, the principal from accounts good for the other two", async () => {
    const { principal } = await clients.accounts.createApiKey({ user: "svc-test", organization: "", plan: "pro" });
    expect(principal?.plan).toBe("pro");
    const { usage } = await clients.billing.getUsage({}, { principal });
    expect(usage?.subscriptionTier).toBe("pro");
    const bucket = { subject: principal?.keyId ?? "", limiter: "read", capacity: 2, windowSeconds: 60 };
    const taken = await clients.edgePolicy.consumeRateLimit({ buckets: [bucket], debit: 0 }, { principal });
    expect(taken).toMatchObject({ allowed: true, buckets: [{ remaining: 1 }] });
  });

  it("still answers a caller of the previous release at the pre-split BillingService paths", async () => {
    // What a gateway or ingest not yet rolled over sends during an upgrade.
    const legacy = <D extends Record<string, { path: string }>>(d: D) =>
      Object.fromEntries(
        Object.entries(d).map(([n, m]) => [
          n,
          { ...m, path: m.path.replace(/^\/[^/]+\//, "/redline.billing.v1.BillingService/") },
        ]),
      ) as D;
    const oldAccounts = createRpcClient(legacy(accountsV1.AccountsServiceService), running.address);
    const oldEdge = createRpcClient(legacy(edgePolicyV1.EdgePolicyServiceService), running.address);
    try {
      const { apiKey } = await oldAccounts.createApiKey({ user: "svc-legacy", organization: "", plan: "" });
      const resolved = await oldAccounts.resolveApiKey({ apiKey });
      expect(resolved.principal?.plan).toBe("free");
      const bucket = { subject: resolved.principal?.keyId ?? "", limiter: "write", capacity: 1, windowSeconds: 60 };
      const taken = await oldEdge.consumeRateLimit({ buckets: [bucket], debit: 0 }, { principal: resolved.principal });
      expect(taken.allowed).toBe(true);
    } finally {
      oldAccounts.close();
      oldEdge.close();
    }
  });

  it("reports one health for all three services", async () => {
    const health = createRpcClient(healthV1.HealthService, running.address);
    try {
      const res = await health.check({ service: "" });
      expect(res.status).toBe(healthV1.HealthCheckResponse_ServingStatus.SERVING);
    } finally {
      health.close();
    }
  });
});
