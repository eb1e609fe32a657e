// Command results → billing.v1 messages.
import type { billingV1 } from "@redline/grpc-stubs";
import { InputError, type Principal } from "@redline/service-kit";
import type { AccountRef } from "./commands/plans.js";
import type { UsageView } from "./commands/quota.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The proto Usage of a usage view (same fields; period_end as a Date). */
export function toUsage(usage: UsageView): billingV1.Usage {
  return { ...usage };
}

/** The proto Principal; `keyId` is empty where no stored key is at hand. */
export function toPrincipal(principal: Principal, keyId = ""): billingV1.Principal {
  return { ...principal, keyId };
}

/** An operator's account reference → the store lookup: id, else user name, else organization name. */
export function toAccountRef(ref: billingV1.AccountRef | undefined): AccountRef {
  if (ref?.accountId) {
    if (!UUID.test(ref.accountId)) throw new InputError("account_id must be a uuid");
    return { id: ref.accountId };
  }
  if (ref?.user) return { kind: "user", name: ref.user };
  if (ref?.organization) return { kind: "organization", name: ref.organization };
  throw new InputError("account is required: account_id, user or organization");
}
