// API keys: created for an account (and optionally an organization), stored only as hashes.
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { type Knex, type Principal, UnauthenticatedError } from "@redline/service-kit";
import { SCHEMA } from "../migrations.js";
import { PLANS } from "../plans.js";
import type { AccountRow, ApiKeyRow } from "../tables.js";

const KEY_PATTERN = /^sk_[0-9a-f]{32}$/;

/** sha256 hex of a raw key; the raw key is never stored. */
export function hashKey(apiKey: string): string {
  return createHash("sha256").update(apiKey).digest("hex");
}

async function upsertAccount(trx: Knex.Transaction, kind: AccountRow["kind"], name: string): Promise<AccountRow> {
  await trx(`${SCHEMA}.accounts`)
    .insert({ id: randomUUID(), kind, name, plan: "free" })
    .onConflict(["kind", "name"])
    .ignore();
  return trx<AccountRow>(`${SCHEMA}.accounts`)
    .where({ kind, name })
    .first()
    .then((row) => row as AccountRow);
}

/**
 * Creates a key `sk_` + 32 hex for `user` (and `organization`, whose member the user becomes).
 * Accounts are created when missing; `plan` (free|plus|pro|enterprise) is set on the owner.
 * Throws Error for an unknown plan name.
 */
export async function createApiKey(
  db: Knex,
  input: { user: string; organization?: string; plan?: string },
): Promise<{ apiKey: string; principal: Principal }> {
  if (!input.user) throw new Error("a user name is required");
  if (input.plan && !PLANS[input.plan]) throw new Error(`unknown plan '${input.plan}' (free, plus, pro, enterprise)`);
  return db.transaction(async (trx) => {
    const user = await upsertAccount(trx, "user", input.user);
    const org = input.organization ? await upsertAccount(trx, "organization", input.organization) : null;
    if (org) {
      await trx(`${SCHEMA}.memberships`).insert({ user_id: user.id, organization_id: org.id }).onConflict().ignore();
    }
    const owner = org ?? user;
    if (input.plan) await trx(`${SCHEMA}.accounts`).where({ id: owner.id }).update({ plan: input.plan });
    const apiKey = `sk_${randomBytes(16).toString("hex")}`;
    await trx(`${SCHEMA}.api_keys`).insert({
      id: randomUUID(),
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
  const key = await db<ApiKeyRow>(`${SCHEMA}.api_keys`)
    .where({ key_hash: hashKey(apiKey) })
    .whereNull("revoked_at")
    .first();
  if (!key) throw new UnauthenticatedError("Invalid or revoked API key");
  const ownerId = key.organization_id ?? key.user_id;
  const owner = await db<AccountRow>(`${SCHEMA}.accounts`).where({ id: ownerId }).first();
  return {
    userId: key.user_id,
    organizationId: key.organization_id ?? "",
    ownerId,
    plan: owner?.plan ?? "free",
    keyId: key.id,
  };
}

/** Revokes a key; false when it was unknown or already revoked. */
export async function revokeApiKey(db: Knex, apiKey: string): Promise<boolean> {
  const count = await db(`${SCHEMA}.api_keys`)
    .where({ key_hash: hashKey(apiKey) })
    .whereNull("revoked_at")
    .update({ revoked_at: db.fn.now() });
  return count > 0;
}
