// The billing process as a library (accounts, billing and edge policy): tests, the bench and main.ts
// start it from a config.
import { accountsV1, billingV1, edgePolicyV1 } from "@redline/grpc-stubs";
import {
  migrateLatest,
  type Periodic,
  pingDb,
  type RunningService,
  type StartOptions,
  serveService,
  startPeriodic,
} from "@redline/service-kit";
import { releaseExpiredHolds } from "./commands/quota.js";
import type { BillingConfig } from "./config.js";
import { type BillingContext, closeContext, createContext } from "./context.js";
import { migrations, SCHEMA } from "./db/migrations.js";

/**
 * Migrates schema `billing` (unless `opts.migrate` is false) and serves, on cfg.grpcAddress, the
 * three proto services of this process (one context, one pool, one schema): AccountsService
 * (rpc/accounts/), BillingService (rpc/billing/), EdgePolicyService (rpc/edge-policy/), and one
 * grpc.health.v1 Health for all three (they share the one dependency, Postgres).
 */
export async function startBillingService(cfg: BillingConfig, opts: StartOptions = {}): Promise<RunningService> {
  const ctx: BillingContext = createContext(cfg);
  try {
    if (opts.migrate !== false) await migrateLatest(ctx.db, SCHEMA, migrations, ctx.log);
  } catch (err) {
    await closeContext(ctx);
    throw err;
  }
  const accounts = accountsV1.AccountsServiceService;
  const edgePolicy = edgePolicyV1.EdgePolicyServiceService;
  const rpc = [
    {
      dir: new URL("./rpc/accounts/", import.meta.url),
      definitions: [accounts, legacyBillingPaths(accounts)],
    },
    { dir: new URL("./rpc/billing/", import.meta.url), definitions: [billingV1.BillingServiceService] },
    {
      dir: new URL("./rpc/edge-policy/", import.meta.url),
      definitions: [edgePolicy, legacyBillingPaths(edgePolicy)],
    },
  ];
  const health = { postgres: () => pingDb(ctx.db) };
  const sweep = startHoldSweep(ctx, cfg.holdSweepMs ?? DEFAULT_HOLD_SWEEP_MS);
  return serveService("billing", cfg.grpcAddress, ctx, {
    rpc,
    health,
    metrics: cfg.metricsAddr,
    release: async () => {
      await sweep.stop();
      await closeContext(ctx);
    },
  });
}

/** The gRPC service every RPC of AccountsService and EdgePolicyService belonged to before the split. */
const LEGACY_SERVICE = "redline.billing.v1.BillingService";

/**
 * `definition` again at its methods' pre-split paths (`/redline.billing.v1.BillingService/<Method>`),
 * for one release: during a rolling upgrade a gateway or ingest of the previous release still
 * calls ResolveApiKey, ConsumeRateLimit and the rest there, and the messages are wire-identical.
 * So billing is rolled out first (deploy/k8s/README.md); drop this once no older caller runs.
 */
function legacyBillingPaths<D extends Record<string, { path: string }>>(definition: D): D {
  return Object.fromEntries(
    Object.entries(definition).map(([name, method]) => [
      name,
      { ...method, path: method.path.replace(/^\/[^/]+\//, `/${LEGACY_SERVICE}/`) },
    ]),
  ) as D;
}

/** How often expired holds are released by default (ms): a stale hold costs a quota operation meanwhile. */
export const DEFAULT_HOLD_SWEEP_MS = 30_000;

/**
 * Releases expired holds every `periodMs` (issue #10): a periodic sweep, not a check on read,
 * because a stale hold counts against the quota (and refuses reservations) whether or not anyone
 * reads the usage. Several billing instances may sweep at once: settling is guarded per key.
 */
function startHoldSweep(ctx: BillingContext, periodMs: number): Periodic {
  return startPeriodic("releasing expired holds", periodMs, ctx.log, async () => {
    const released = await releaseExpiredHolds(ctx.db, ctx.clock.now());
    if (released > 0) ctx.log.info({ released }, "released expired holds");
  });
}
