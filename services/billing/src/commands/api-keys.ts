// API keys (interface-spec Authentication): created for an account (and optionally an
// organization), stored only as sha256 hashes and a 7-character prefix; named, optionally
// read-only, with a last use kept to the minute. A user manages their own personal keys;
// organization keys are managed in commands/organizations.ts.
import { createHash, randomBytes } from "node:crypto";
import { InputError, type Knex, NotFoundError, type Principal, UnauthenticatedError } from "@redline/service-kit";
import {
  addMembership,
  countOwners,
  findAccount,
  findAccountByName,
  setAccountPlan,
  upsertAccount,
} from "../db/store/accounts.js";
import {
  findActiveKey,
  insertApiKey,
  listKeys,
  revokeKeyByHash,
  revokeKeyById,
  touchKey,
} from "../db/store/api-keys.js";
import type { AccountRow, ApiKeyRow } from "../db/tables.js";
import { PLANS } from "./plans.js";

const KEY_PATTERN = /^sk_[0-9a-f]{32}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Longest key label (characters). */
export const MAX_KEY_NAME_CHARS = 100;

/** sha256 hex of a raw key; the raw key is never stored. */
export function hashKey(apiKey: string): string {
  return createHash("sha256").update(apiKey).digest("hex");
}

/** Whether `id` can be a stored id (a UUID); anything else is unknown without a query. */
export function isUuid(id: string): boolean {
  return UUID.test(id);
}

/** A key's label trimmed, null when empty; InputError (400) past MAX_KEY_NAME_CHARS. */
export function keyName(name: string | undefined): string | null {
  const trimmed = (name ?? "").trim();
  if (trimmed.length > MAX_KEY_NAME_CHARS)
    throw new InputError(`name is too long: at most ${MAX_KEY_NAME_CHARS} characters`);
  return trimmed || null;
}

/** A new key as created: the raw key (shown once) and its stored row. */
export interface IssuedKey {
  apiKey: string;
  row: ApiKeyRow;
}

/** Mints `sk_` + 32 hex and stores its hash for the user (acting for `organizationId` when set). */
export async function issueKey(
  db: Knex | Knex.Transaction,
  key: { userId: string; organizationId: string | null; name?: string | null; readOnly?: boolean },
): Promise<IssuedKey> {
  const apiKey = `sk_${randomBytes(16).toString("hex")}`;
  const row = await insertApiKey(db, {
    key_hash: hashKey(apiKey),
    key_prefix: apiKey.slice(0, 7),
    user_id: key.userId,
    organization_id: key.organizationId,
    name: key.name ?? null,
    read_only: key.readOnly ?? false,
  });
  return { apiKey, row };
}

/**
 * Operator CLI: creates a key `sk_` + 32 hex for `user` (and `organization`, whose member the
 * user becomes: its owner when it has none yet). Accounts are created when missing; `plan`
 * (free|plus|pro|enterprise) is set on the owner. InputError for a missing user, an unknown plan
 * or a name over 100 characters.
 */
export async function createApiKey(
  db: Knex,
  input: { user: string; organization?: string; plan?: string; name?: string; readOnly?: boolean },
): Promise<{ apiKey: string; principal: Principal; key: ApiKeyRow }> {
  if (!input.user) throw new InputError("a user name is required");
  if (input.plan && !PLANS[input.plan])
    throw new InputError(`unknown plan '${input.plan}' (free, plus, pro, enterprise)`);
  const name = keyName(input.name);
  return db.transaction(async (trx) => {
    const user = await upsertAccount(trx, "user", input.user);
    const org = input.organization ? await upsertAccount(trx, "organization", input.organization) : null;
    if (org) await addMembership(trx, user.id, org.id, (await countOwners(trx, org.id)) === 0 ? "owner" : "member");
    const owner = org ?? user;
    if (input.plan) await setAccountPlan(trx, owner.id, input.plan);
    const { apiKey, row } = await issueKey(trx, {
      userId: user.id,
      organizationId: org?.id ?? null,
      name,
      readOnly: input.readOnly,
    });
    return {
      apiKey,
      key: row,
      principal: { userId: user.id, organizationId: org?.id ?? "", ownerId: owner.id, plan: input.plan || owner.plan },
    };
  });
}

/** A resolved key: its principal, id and whether it may only read. */
export type ResolvedKey = Principal & { keyId: string; readOnly: boolean };

/**
 * Resolves a raw key to its principal; UnauthenticatedError when malformed, unknown or revoked.
 * Records the use (last_used_at, at most one write a minute per key).
 */
export async function resolveApiKey(db: Knex, apiKey: string): Promise<ResolvedKey> {
  if (!KEY_PATTERN.test(apiKey)) throw new UnauthenticatedError("Invalid API key");
  const key = await findActiveKey(db, hashKey(apiKey));
  if (!key) throw new UnauthenticatedError("Invalid or revoked API key");
  const ownerId = key.organization_id ?? key.user_id;
  const [owner, user] = await Promise.all([
    findAccount(db, ownerId),
    ownerId === key.user_id ? undefined : findAccount(db, key.user_id),
    touchKey(db, key.id),
  ]);
  const userName = (ownerId === key.user_id ? owner : user)?.name;
  return {
    userId: key.user_id,
    ...(userName ? { userName } : {}),
    organizationId: key.organization_id ?? "",
    ownerId,
    plan: owner?.plan ?? "free",
    keyId: key.id,
    readOnly: key.read_only,
  };
}

/** Revokes a key; false when it was unknown or already revoked. */
export function revokeApiKey(db: Knex, apiKey: string): Promise<boolean> {
  return revokeKeyByHash(db, hashKey(apiKey));
}

/**
 * POST /v1/api-keys: a new personal key of the caller's user (never an organization key, even
 * when the caller uses one). InputError (400) for a name over 100 characters.
 */
export async function createOwnApiKey(
  db: Knex,
  principal: Principal,
  input: { name?: string; readOnly?: boolean },
): Promise<IssuedKey> {
  const name = keyName(input.name);
  return issueKey(db, { userId: principal.userId, organizationId: null, name, readOnly: input.readOnly });
}

/** GET /v1/api-keys: the caller's user's active personal keys, newest first. */
export function listOwnApiKeys(db: Knex, principal: Principal): Promise<ApiKeyRow[]> {
  return listKeys(db, { userId: principal.userId, organizationId: null });
}

/**
 * DELETE /v1/api-keys/{id}: revokes one of the caller's personal keys. NotFoundError (404) for an
 * unknown or revoked id and for anyone else's key, so the answer never tells that a key exists.
 */
export async function revokeOwnApiKey(db: Knex, principal: Principal, id: string): Promise<void> {
  const done = isUuid(id) && (await revokeKeyById(db, id, { userId: principal.userId, organizationId: null }));
  if (!done) throw new NotFoundError("API key not found");
}

/** Operator CLI: the user's (name or id) active keys, personal and organization; 404 unknown user. */
export async function adminListApiKeys(db: Knex, user: string): Promise<ApiKeyRow[]> {
  const account = await findUserByNameOrId(db, user);
  return listKeys(db, { userId: account.id });
}

/** Operator CLI: revokes a key by id; NotFoundError when unknown or already revoked. */
export async function adminRevokeApiKey(db: Knex, id: string): Promise<void> {
  const done = isUuid(id) && (await revokeKeyById(db, id, { all: true }));
  if (!done) throw new NotFoundError("API key not found");
}

/** A user account by id or name; NotFoundError (404) when neither matches. */
export async function findUserByNameOrId(db: Knex | Knex.Transaction, user: string): Promise<AccountRow> {
  const byId = isUuid(user) ? await findAccount(db, user) : undefined;
  const account = byId?.kind === "user" ? byId : await findAccountByName(db, "user", user);
  if (!account) throw new NotFoundError(`user '${user}' not found`);
  return account;
}
