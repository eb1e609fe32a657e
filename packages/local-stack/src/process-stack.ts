// A deployed-shape stack for benches and the soak (`pnpm start`'s shape, every service its own
// process) on fresh ports over a fresh database, and a fetch helper shaped like the test stack's call.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { accountsV1 } from "@redline/grpc-stubs";
import { createTestDatabase, infraEnv } from "@redline/local-infra";
import { createRpcClient } from "@redline/service-kit";
import { freeStackEnv } from "./addrs.js";
import { type RunningStack, startStack } from "./stack.js";

/** A fetch against the gateway with a bearer key and a JSON body (test/support/stack.ts's TestStack.call). */
export type GatewayCall = (
  method: string,
  path: string,
  opts?: { key?: string; body?: unknown; headers?: Record<string, string> },
) => Promise<Response>;

/** fetch against a gateway URL, shaped like GatewayCall. */
export function caller(url: string): GatewayCall {
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
  call: GatewayCall;
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
      // Stacks may share one NATS: durable webhook consumers of their own (docs/configuration.md, Webhooks).
      WEBHOOK_CONSUMER: `webhooks-${name.replace(/[^A-Za-z0-9_-]/g, "_")}-${process.pid}`,
      LOG_LEVEL: "warn",
      ...env,
    },
  });
  const accounts = createRpcClient(accountsV1.AccountsServiceService, stack.addrs.billing);
  const { apiKey } = await accounts.createApiKey({ user: `bench-${name}`, organization: "", plan: "pro" });
  accounts.close();
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
