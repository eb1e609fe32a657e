// The billing service as a library: build from config, start, close. main.ts is the thin shell.
import { billingV1 } from "@redline/grpc-stubs";
import {
  bindService,
  createDb,
  createLogger,
  healthService,
  InputError,
  type Knex,
  migrateLatest,
  pingDb,
  requirePrincipal,
  startGrpcServer,
} from "@redline/service-kit";
import { createApiKey, resolveApiKey, revokeApiKey } from "./commands/api-keys.js";
import { getUsage, reserveOperations, settleOperations, type UsageView } from "./commands/quota.js";
import { migrations, SCHEMA } from "./migrations.js";

/** Billing configuration. */
export interface BillingConfig {
  grpcAddress: string;
  databaseUrl: string;
  logLevel?: string;
}

/** A started service. */
export interface RunningService {
  address: string;
  close(): Promise<void>;
}

function usageMsg(u: UsageView): billingV1.Usage {
  return { ...u };
}

/** Handlers of billing.v1.BillingService (interface-spec Authentication and Limits). */
export function billingHandlers(db: Knex) {
  return bindService(billingV1.BillingServiceService, {
    async resolveApiKey(req) {
      const { keyId, ...principal } = await resolveApiKey(db, req.apiKey);
      return { principal: { ...principal, keyId } };
    },
    async createApiKey(req) {
      try {
        const { apiKey, principal } = await createApiKey(db, {
          user: req.user,
          organization: req.organization || undefined,
          plan: req.plan || undefined,
        });
        return { apiKey, principal: { ...principal, keyId: "" } };
      } catch (err) {
        if (err instanceof Error && !("httpStatus" in err)) throw new InputError(err.message);
        throw err;
      }
    },
    async revokeApiKey(req) {
      return { revoked: await revokeApiKey(db, req.apiKey) };
    },
    async getUsage(_req, ctx) {
      return { usage: usageMsg(await getUsage(db, requirePrincipal(ctx))) };
    },
    async reserveOperations(req, ctx) {
      if (!req.chargeKey || req.operations < 1) throw new InputError("charge_key and operations >= 1 are required");
      return { usage: usageMsg(await reserveOperations(db, requirePrincipal(ctx), req.chargeKey, req.operations)) };
    },
    async settleOperations(req, ctx) {
      if (!req.chargeKey || req.operations < 0) throw new InputError("charge_key and operations >= 0 are required");
      return { usage: usageMsg(await settleOperations(db, requirePrincipal(ctx), req.chargeKey, req.operations)) };
    },
  });
}

/** Migrates the billing schema and serves BillingService and Health on cfg.grpcAddress. */
export async function startBillingService(cfg: BillingConfig): Promise<RunningService> {
  const log = createLogger("billing", cfg.logLevel);
  const db = createDb(cfg.databaseUrl, SCHEMA);
  await migrateLatest(db, SCHEMA, migrations);
  const server = await startGrpcServer(
    cfg.grpcAddress,
    [billingHandlers(db), healthService({ postgres: () => pingDb(db) })],
    log,
  );
  log.info({ address: server.address }, "billing listening");
  return {
    address: server.address,
    async close() {
      await server.close();
      await db.destroy();
    },
  };
}
