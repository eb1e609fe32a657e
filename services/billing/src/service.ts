// The billing service as a library: tests, the bench and main.ts start it from a config.
import { billingV1 } from "@redline/grpc-stubs";
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

/** Migrates schema `billing` (unless `opts.migrate` is false) and serves BillingService and Health on cfg.grpcAddress. */
export async function startBillingService(cfg: BillingConfig, opts: StartOptions = {}): Promise<RunningService> {
  const ctx: BillingContext = createContext(cfg);
  try {
    if (opts.migrate !== false) await migrateLatest(ctx.db, SCHEMA, migrations, ctx.log);
  } catch (err) {
    await closeContext(ctx);
    throw err;
  }
  const rpc = { dir: new URL("./rpc/", import.meta.url), definitions: [billingV1.BillingServiceService] };
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
