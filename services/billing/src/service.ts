// The billing service as a library: tests, the bench and main.ts start it from a config.
import { billingV1 } from "@redline/grpc-stubs";
import { bindRpcFiles, migrateLatest, pingDb, type RunningService, serveService } from "@redline/service-kit";
import type { BillingConfig } from "./config.js";
import { type BillingContext, closeContext, createContext } from "./context.js";
import { migrations, SCHEMA } from "./db/migrations.js";

/** Migrates schema `billing` and serves BillingService and Health on cfg.grpcAddress. */
export async function startBillingService(cfg: BillingConfig): Promise<RunningService> {
  const ctx: BillingContext = createContext(cfg);
  try {
    await migrateLatest(ctx.db, SCHEMA, migrations);
  } catch (err) {
    await closeContext(ctx);
    throw err;
  }
  return serveService({
    name: "billing",
    address: cfg.grpcAddress,
    services: await bindRpcFiles(ctx, new URL("./rpc/", import.meta.url), [billingV1.BillingServiceService]),
    health: { postgres: () => pingDb(ctx.db) },
    log: ctx.log,
    release: () => closeContext(ctx),
  });
}
