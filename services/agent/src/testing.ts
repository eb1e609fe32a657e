// Test support: the services the agent calls, started in-process on the global-setup Postgres
// and NATS (billing, documents and sessions, each restartable on its own address so a test can
// take one down and bring it back), and an agent context on a migrated database of its own that
// calls them through its real clients.
import { startBillingService } from "@redline/billing";
import { startDocumentsService } from "@redline/documents";
import { accountsV1 } from "@redline/grpc-stubs";
import { createTestDatabase } from "@redline/local-infra";
import {
  createRpcClient,
  migrateLatest,
  type Principal,
  type RpcClient,
  type RunningService,
} from "@redline/service-kit";
import { startSessionsService } from "@redline/sessions";
import { inject } from "vitest";
import type { AgentConfig } from "./config.js";
import { type AgentContext, closeContext, createContext } from "./context.js";
import { migrations, SCHEMA } from "./db/migrations.js";

/** No service listens here: a client of a service not started fails with UNAVAILABLE. */
const NOWHERE = "127.0.0.1:9";

/**
 * A context on a fresh agent database named after `name`, migrated, with the run's NATS and the
 * offline engine, calling the services at `addrs` (those left out: NOWHERE); `overrides`
 * replaces pieces. Close it with closeContext.
 */
export async function agentTestContext(
  name: string,
  addrs: Partial<AgentConfig["addrs"]> = {},
  overrides: Partial<AgentContext> = {},
): Promise<AgentContext> {
  const infra = inject("infra");
  const cfg: AgentConfig = {
    grpcAddress: NOWHERE,
    addrs: { documents: NOWHERE, sessions: NOWHERE, billing: NOWHERE, ingest: NOWHERE, ...addrs },
    aiTimeoutMs: 60_000,
    historyTurns: 4,
    logLevel: "silent",
    databaseUrl: await createTestDatabase(infra.databaseUrl, `agent_${name}`),
    natsUrl: infra.natsUrl,
  };
  const ctx = await createContext(cfg, overrides);
  await migrateLatest(ctx.db, SCHEMA, migrations);
  return ctx;
}

export { closeContext };

/** A service a test can stop (its address then refuses connections) and start again on the same address. */
export interface Restartable {
  /** host:port it serves on, the same across restarts. */
  readonly address: string;
  /** Closes the server (a no-op when stopped). */
  stop(): Promise<void>;
  /** Serves again on `address` (a no-op when running). */
  start(): Promise<void>;
}

/** The agent's dependencies as a test runs them. */
export interface AgentDependencies {
  /** Their addresses, for agentTestContext (ingest is not started). */
  addrs: Pick<AgentConfig["addrs"], "billing" | "documents" | "sessions">;
  /** The billing process (AccountsService, BillingService, EdgePolicyService); its hold sweep runs every 100 ms. */
  billing: Restartable;
  sessions: Restartable;
  /** The billing process's AccountsService, to create callers. */
  accounts: RpcClient<typeof accountsV1.AccountsServiceService>;
  /** A principal of a new account (`plan`, default free) that no other test shares. */
  newPrincipal(plan?: string): Promise<Principal>;
  /** Stops everything. */
  close(): Promise<void>;
}

/** Period of the test billing's expired-hold sweep, in ms: a hold past its expiry is gone within it. */
export const TEST_HOLD_SWEEP_MS = 100;

/**
 * Starts billing (with its test clock), documents and sessions on 127.0.0.1 ports of their own,
 * against a fresh database named after `name` (each service in its schema, as the test stack has
 * them).
 */
export async function startAgentDependencies(name: string): Promise<AgentDependencies> {
  const infra = inject("infra");
  const databaseUrl = await createTestDatabase(infra.databaseUrl, `agent_deps_${name}`);
  const logLevel = process.env.TEST_LOG_LEVEL ?? "silent";
  const documents = await startDocumentsService({
    grpcAddress: "127.0.0.1:0",
    databaseUrl,
    natsUrl: infra.natsUrl,
    logLevel,
  });
  const billing = await restartable((grpcAddress) =>
    startBillingService({ grpcAddress, databaseUrl, logLevel, testClock: true, holdSweepMs: TEST_HOLD_SWEEP_MS }),
  );
  const sessions = await restartable((grpcAddress) =>
    startSessionsService({
      grpcAddress,
      databaseUrl,
      natsUrl: infra.natsUrl,
      // Test files share one NATS: a durable consumer of their own, so none takes another's events.
      webhooks: { consumer: `webhooks-agent-deps-${name}-${Date.now().toString(36)}` },
      addrs: { documents: documents.address },
      logLevel,
    }),
  );
  const accounts = createRpcClient(accountsV1.AccountsServiceService, billing.address);
  let callers = 0;
  return {
    addrs: { billing: billing.address, documents: documents.address, sessions: sessions.address },
    billing,
    sessions,
    accounts,
    async newPrincipal(plan = "") {
      const user = `${name}-${++callers}-${Date.now().toString(36)}`;
      const { principal } = await accounts.createApiKey({ user, organization: "", plan });
      if (!principal) throw new Error("CreateApiKey answered without a principal");
      return {
        userId: principal.userId,
        organizationId: principal.organizationId,
        ownerId: principal.ownerId,
        plan: principal.plan,
      };
    },
    async close() {
      accounts.close();
      await Promise.all([billing.stop(), sessions.stop()]);
      await documents.close();
    },
  };
}

/** Starts a service on a free port, then serves it on that same port across stop and start. */
async function restartable(serve: (grpcAddress: string) => Promise<RunningService>): Promise<Restartable> {
  let running: RunningService | undefined = await serve("127.0.0.1:0");
  const address = running.address;
  return {
    address,
    async stop() {
      const stopping = running;
      running = undefined;
      await stopping?.close();
    },
    async start() {
      running ??= await serve(address);
    },
  };
}

/**
 * Resolves once `check` answers true, polling every 50 ms; a check that throws counts as false
 * (a restarted service the agent's client has not reconnected to yet). Throws after `timeoutMs`.
 */
export async function until(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const giveUpAt = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > giveUpAt) throw new Error(`not true within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
