// The billing service as a library: tests, the bench and main.ts start it from a config.
import { billingV1 } from "@redline/grpc-stubs";
import { migrateLatest, pingDb, type RunningService, type StartOptions, serveService } from "@redline/service-kit";
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
  return serveService("billing", cfg.grpcAddress, ctx, {
    rpc,
    health,
    metrics: cfg.metricsAddr,
    release: () => closeContext(ctx),
  });
}
