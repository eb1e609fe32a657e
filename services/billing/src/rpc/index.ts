// BillingService's RPCs, each bound to its own file.
import { billingV1 } from "@redline/grpc-stubs";
import { bindService, type RpcHandlers, type ServiceBinding } from "@redline/service-kit";
import type { BillingContext } from "../context.js";
import { createApiKey } from "./create-api-key.js";
import { getUsage } from "./get-usage.js";
import { reserveOperations } from "./reserve-operations.js";
import { resolveApiKey } from "./resolve-api-key.js";
import { revokeApiKey } from "./revoke-api-key.js";
import { settleOperations } from "./settle-operations.js";

type Handlers = RpcHandlers<typeof billingV1.BillingServiceService>;

/** One RPC of BillingService, given the service's context. */
export type BillingRpc<K extends keyof Handlers> = (ctx: BillingContext) => Handlers[K];

/** Handlers of billing.v1.BillingService (interface-spec Authentication and Limits). */
export function billingHandlers(ctx: BillingContext): ServiceBinding {
  return bindService(billingV1.BillingServiceService, {
    resolveApiKey: resolveApiKey(ctx),
    createApiKey: createApiKey(ctx),
    revokeApiKey: revokeApiKey(ctx),
    getUsage: getUsage(ctx),
    reserveOperations: reserveOperations(ctx),
    settleOperations: settleOperations(ctx),
  });
}
