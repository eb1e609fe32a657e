// Stacks for `pnpm bench`: the deployed shape (`pnpm start`, every service its own process) on
// fresh ports over a fresh database, and a fetch helper shaped like the test stack's call.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { billingV1 } from "@redline/grpc-stubs";
import { createTestDatabase, infraEnv } from "@redline/local-infra";
import { createRpcClient } from "@redline/service-kit";
import type { TestStack } from "../../test/support/stack.js";
import { freeStackEnv, type RunningStack, startStack } from "./stack.js";

/** fetch against a gateway URL, shaped like TestStack.call. */
export function caller(url: string): TestStack["call"] {
  return (method, path, opts = {}) =>
    fetch(`${url}${path}`, {
      method,
      headers: {
        ...(opts.key ? { Authorization: `Bearer ${opts.key}` } : {}),
        ...(opts.body !== undefined ? { "Content-Type": "application/json" } : {}),
        ...opts.headers,
      },
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
}

/** A deployed-shape stack and a pro-plan API key of its own. */
export interface ProcessStack {
  stack: RunningStack;
  /** The gateway's base URL. */
  url: string;
  call: TestStack["call"];
  key: string;
  /** Stops the processes and removes the data directory. */
  stop(): Promise<void>;
}

/**
 * A `pnpm start` stack (a process per service) on fresh ports over its own database `name`,
 * logging at warn; `env` is applied last (engine, METRICS_ADDR, OTEL_* ...).
 */
export async function startProcessStack(
  infra: Parameters<typeof infraEnv>[0],
  name: string,
  env: NodeJS.ProcessEnv,
): Promise<ProcessStack> {
  const dataDir = mkdtempSync(join(tmpdir(), `redline-bench-${name}-`));
  // Embedded Postgres runs as the postgres user, which must be able to enter the directory.
  chmodSync(dataDir, 0o755);
  const stack = await startStack({
    dataDir,
    env: {
      ...process.env,
      ...(await freeStackEnv()),
      ...infraEnv({ ...infra, databaseUrl: await createTestDatabase(infra.databaseUrl, name) }),
      LOG_LEVEL: "warn",
      ...env,
    },
  });
  const billing = createRpcClient(billingV1.BillingServiceService, stack.addrs.billing);
  const { apiKey } = await billing.createApiKey({ user: `bench-${name}`, organization: "", plan: "pro" });
  billing.close();
  return {
    stack,
    url: stack.gatewayUrl,
    call: caller(stack.gatewayUrl),
    key: apiKey,
    async stop() {
      await stack.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
