// The shape of an RPC file of the billing service.
import type { billingV1 } from "@redline/grpc-stubs";
import type { Rpc } from "@redline/service-kit";
import type { BillingContext } from "../context.js";

type BillingDef = typeof billingV1.BillingServiceService;
/** One RPC of billing.v1.BillingService, in `rpc/<verb-noun>.ts` (bound by file name). */
export type BillingRpc<K extends keyof BillingDef> = Rpc<BillingContext, BillingDef, K>;
