// The shapes of the billing process's RPC files: one folder per proto service it serves
// (rpc/accounts/, rpc/billing/, rpc/edge-policy/), each file bound by its name.
import type { accountsV1, billingV1, edgePolicyV1 } from "@redline/grpc-stubs";
import type { Rpc } from "@redline/service-kit";
import type { BillingContext } from "../context.js";

type AccountsDef = typeof accountsV1.AccountsServiceService;
type BillingDef = typeof billingV1.BillingServiceService;
type EdgePolicyDef = typeof edgePolicyV1.EdgePolicyServiceService;

/** One RPC of accounts.v1.AccountsService, in `rpc/accounts/<verb-noun>.ts`. */
export type AccountsRpc<K extends keyof AccountsDef> = Rpc<BillingContext, AccountsDef, K>;
/** One RPC of billing.v1.BillingService, in `rpc/billing/<verb-noun>.ts`. */
export type BillingRpc<K extends keyof BillingDef> = Rpc<BillingContext, BillingDef, K>;
/** One RPC of edge.v1.EdgePolicyService, in `rpc/edge-policy/<verb-noun>.ts`. */
export type EdgePolicyRpc<K extends keyof EdgePolicyDef> = Rpc<BillingContext, EdgePolicyDef, K>;
