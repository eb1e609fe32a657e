// API keys (interface-spec Authentication): created for an account (and optionally an
// organization), stored only as sha256 hashes and a 7-character prefix; named, optionally
// read-only, with a last use kept to the minute. A user manages their own personal keys;
// organization keys are managed in commands/organizations.ts.
import { createHash, randomBytes } from "node:crypto";
import {
  ConflictError,
  ForbiddenError,
  InputError,
  isUuid,
  type Knex,
  NotFoundError,
  type Principal,
  UnauthenticatedError,
} from "@redline/service-kit";
import {
  addMembership,
  countOwners,
  findAccount,
  findAccountByName,
  lockAccountById,
  setAccountPlan,
  upsertAccount,
} from "../db/store/accounts.js";
import {
  countLiveKeys,
  findActiveKey,
  findKeyById,
  insertApiKey,
  listKeys,
  revokeKeyByHash,
  revokeKeyById,
  touchKey,
} from "../db/store/api-keys.js";
import type { AccountRow, ApiKeyRow } from "../db/tables.js";
import { PLANS } from "./plans.js";

const KEY_PATTERN = /^sk_[0-9a-f]{32}$/;
/** Longest key label (characters). */
export const MAX_KEY_NAME_CHARS = 100;

/** sha256 hex of a raw key; the raw key is never stored. */
export function hashKey(apiKey: string): string {
  return createHash("sha256").update(apiKey).digest("hex");
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

/**
 * Mints `sk_` + 32 hex and stores its hash for the user (acting for `organizationId` when set);
 * `agent` marks a key minted while the account is an agent's (a takeover revokes those).
 */
export async function issueKey(
  db: Knex | Knex.Transaction,
  key: { userId: string; organizationId: string | null; name?: string | null; readOnly?: boolean; agent?: boolean },
): Promise<IssuedKey> {
  const apiKey = `sk_${randomBytes(16).toString("hex")}`;
  const row = await insertApiKey(db, {
    key_hash: hashKey(apiKey),
    key_prefix: apiKey.slice(0, 7),
    user_id: key.userId,
    organization_id: key.organizationId,
    name: key.name ?? null,
    read_only: key.readOnly ?? false,
    agent: key.agent ?? false,
  });
  return { apiKey, row };
}

/** 409 `{detail, code: "key_limit"}`: the account holds the most live keys allowed. */
export class KeyLimitError extends ConflictError {
  constructor(cap: number) {
    super(`This account already has ${cap} live API keys, the most allowed: revoke one first`, { code: "key_limit" });
  }
}

/**
 * Issues a key under the account's cap of live keys: the account (the user for personal keys,
 * the organization for its keys) is locked so concurrent creations count one at a time.
 * KeyLimitError (409) at `cap`.
 */
export async function issueCappedKey(
  trx: Knex.Transaction,
  key: { userId: string; organizationId: string | null; name: string | null; readOnly?: boolean; agent: boolean },
  cap: number,
): Promise<IssuedKey> {
  await lockAccountById(trx, key.organizationId ?? key.userId);
  const scope = key.organizationId
    ? { organizationId: key.organizationId }
    : { userId: key.userId, organizationId: null };
  if ((await countLiveKeys(trx, scope)) >= cap) throw new KeyLimitError(cap);
  return issueKey(trx, key);
}

/**
 * The key that made the request, read again from the table: the gateway caches a key's answer
 * for a few seconds, so an account change (a new key, a revocation, an email) must not trust a
 * key revoked meanwhile (a takeover revokes the agent's). UnauthenticatedError (401) for a
 * revoked or unknown key; undefined when the call names no key (internal callers).
 */
export async function callerKey(db: Knex | Knex.Transaction, principal: Principal): Promise<ApiKeyRow | undefined> {
  if (!principal.keyId) return undefined;
  const row = isUuid(principal.keyId) ? await findKeyById(db, principal.keyId) : undefined;
  if (!row || row.revoked_at || row.user_id !== principal.userId)
    throw new UnauthenticatedError("Invalid or revoked API key");
  return row;
}

/** 403 `{detail, code: "agent_key"}` for what an agent's key may never do to a human's account. */
export function agentKeyRefusal(action: string): ForbiddenError {
  return new ForbiddenError(`An agent's API key cannot ${action}`, { code: "agent_key" });
}

/**
 * Revokes the key `id` within `scope` for the caller: a key minted while the account was an
 * agent's may revoke only other agent keys, never one a human holds. NotFoundError (404) when the
 * key is not in scope (unknown, revoked, anyone else's); ForbiddenError (403, agent_key) otherwise.
 */
export async function revokeKeyForCaller(
  db: Knex,
  principal: Principal,
  id: string,
  scope: { userId: string; organizationId: null } | { organizationId: string },
): Promise<void> {
  await db.transaction(async (trx) => {
    const caller = await callerKey(trx, principal);
    const target = isUuid(id) ? await findKeyById(trx, id) : undefined;
    const inScope =
      target &&
      !target.revoked_at &&
      ("userId" in scope
        ? target.user_id === scope.userId && target.organization_id === null
        : target.organization_id === scope.organizationId);
    if (!target || !inScope) throw new NotFoundError("API key not found");
    if (caller?.agent && !target.agent) throw agentKeyRefusal("revoke a key a human holds");
    if (!(await revokeKeyById(trx, id, scope))) throw new NotFoundError("API key not found");
  });
}

/**
 * Operator CLI: creates a key `sk_` + 32 hex for `user` (and `organization`, whose member the
 * user becomes: its owner when it has none yet). Accounts are created when missing; `plan`
 * (none|free|plus|pro|enterprise) is set on the owner. InputError for a missing user, an unknown plan
 * or a name over 100 characters.
 */
export async function createApiKey(
  db: Knex,
  input: { user: string; organization?: string; plan?: string; name?: string; readOnly?: boolean },
): Promise<{ apiKey: string; principal: Principal; key: ApiKeyRow }> {
  if (!input.user) throw new InputError("a user name is required");
  if (input.plan && !PLANS[input.plan])
    throw new InputError(`unknown plan '${input.plan}' (${Object.keys(PLANS).join(", ")})`);
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
 * when the caller uses one), marked an agent's while the account is one. InputError (400) for a
 * name over 100 characters; KeyLimitError (409) at `cap` live personal keys; 401 when the calling
 * key was revoked meanwhile.
 */
export async function createOwnApiKey(
  db: Knex,
  principal: Principal,
  input: { name?: string; readOnly?: boolean },
  cap: number,
): Promise<IssuedKey> {
  const name = keyName(input.name);
  return db.transaction(async (trx) => {
    await callerKey(trx, principal);
    const account = await findAccount(trx, principal.userId);
    if (!account) throw new NotFoundError("Account not found");
    return issueCappedKey(
      trx,
      { userId: principal.userId, organizationId: null, name, readOnly: input.readOnly, agent: account.is_agent },
      cap,
    );
  });
}

/** GET /v1/api-keys: the caller's user's active personal keys, newest first. */
export function listOwnApiKeys(db: Knex, principal: Principal): Promise<ApiKeyRow[]> {
  return listKeys(db, { userId: principal.userId, organizationId: null });
}

/**
 * DELETE /v1/api-keys/{id}: revokes one of the caller's personal keys. NotFoundError (404) for an
 * unknown or revoked id and for anyone else's key, so the answer never tells that a key exists;
 * ForbiddenError (403, agent_key) when an agent's key aims at a human's.
 */
export function revokeOwnApiKey(db: Knex, principal: Principal, id: string): Promise<void> {
  return revokeKeyForCaller(db, principal, id, { userId: principal.userId, organizationId: null });
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
