// API keys (interface-spec Authentication): created for an account (and optionally an
// organization), stored only as sha256 hashes; the SQL lives in db/store/accounts.ts.
import { createHash, randomBytes } from "node:crypto";
import { InputError, type Knex, type Principal, UnauthenticatedError } from "@redline/service-kit";
import {
  addMembership,
  findAccount,
  findActiveKey,
  insertApiKey,
  revokeKeyByHash,
  setAccountPlan,
  upsertAccount,
} from "../db/store/accounts.js";
import { PLANS } from "./plans.js";

const KEY_PATTERN = /^sk_[0-9a-f]{32}$/;

/** sha256 hex of a raw key; the raw key is never stored. */
export function hashKey(apiKey: string): string {
  return createHash("sha256").update(apiKey).digest("hex");
}

/**
 * Creates a key `sk_` + 32 hex for `user` (and `organization`, whose member the user becomes).
 * Accounts are created when missing; `plan` (free|plus|pro|enterprise) is set on the owner.
 * Throws InputError for a missing user or an unknown plan name.
 */
export async function createApiKey(
  db: Knex,
  input: { user: string; organization?: string; plan?: string },
): Promise<{ apiKey: string; principal: Principal }> {
  if (!input.user) throw new InputError("a user name is required");
  if (input.plan && !PLANS[input.plan])
    throw new InputError(`unknown plan '${input.plan}' (free, plus, pro, enterprise)`);
  return db.transaction(async (trx) => {
    const user = await upsertAccount(trx, "user", input.user);
    const org = input.organization ? await upsertAccount(trx, "organization", input.organization) : null;
    if (org) await addMembership(trx, user.id, org.id);
    const owner = org ?? user;
    if (input.plan) await setAccountPlan(trx, owner.id, input.plan);
    const apiKey = `sk_${randomBytes(16).toString("hex")}`;
    await insertApiKey(trx, {
      key_hash: hashKey(apiKey),
      key_prefix: apiKey.slice(0, 7),
      user_id: user.id,
      organization_id: org?.id ?? null,
    });
    return {
      apiKey,
      principal: { userId: user.id, organizationId: org?.id ?? "", ownerId: owner.id, plan: input.plan || owner.plan },
    };
  });
}

/** Resolves a raw key to its principal; UnauthenticatedError when malformed, unknown or revoked. */
export async function resolveApiKey(db: Knex, apiKey: string): Promise<Principal & { keyId: string }> {
  if (!KEY_PATTERN.test(apiKey)) throw new UnauthenticatedError("Invalid API key");
  const key = await findActiveKey(db, hashKey(apiKey));
  if (!key) throw new UnauthenticatedError("Invalid or revoked API key");
  const ownerId = key.organization_id ?? key.user_id;
  const owner = await findAccount(db, ownerId);
  return {
    userId: key.user_id,
    organizationId: key.organization_id ?? "",
    ownerId,
    plan: owner?.plan ?? "free",
    keyId: key.id,
  };
}

/** Revokes a key; false when it was unknown or already revoked. */
export function revokeApiKey(db: Knex, apiKey: string): Promise<boolean> {
  return revokeKeyByHash(db, hashKey(apiKey));
}
