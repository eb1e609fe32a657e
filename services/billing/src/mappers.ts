// Command results → billing.v1 messages.
import type { billingV1 } from "@redline/grpc-stubs";
import type { Principal } from "@redline/service-kit";
import type { UsageView } from "./commands/quota.js";

/** The proto Usage of a usage view (same fields; period_end as a Date). */
export function toUsage(usage: UsageView): billingV1.Usage {
  return { ...usage };
}

/** The proto Principal; `keyId` is empty where no stored key is at hand. */
export function toPrincipal(principal: Principal, keyId = ""): billingV1.Principal {
  return { ...principal, keyId };
}
