// API keys: all SQL of the keys table. Keys are stored as sha256 hashes and a 7-character prefix
// only. Functions take a `Knex | Knex.Transaction`; the command opens the transaction.
import { randomUUID } from "node:crypto";
import type { Knex } from "@redline/service-kit";
import { type ApiKeyRow, TABLES } from "../tables.js";

type Db = Knex | Knex.Transaction;

/** Stores a key by its hash and prefix only; the stored row. */
export async function insertApiKey(
  db: Db,
  key: Pick<ApiKeyRow, "key_hash" | "key_prefix" | "user_id" | "organization_id"> &
    Partial<Pick<ApiKeyRow, "name" | "read_only" | "agent">>,
): Promise<ApiKeyRow> {
  const [row] = await db<ApiKeyRow>(TABLES.apiKeys)
    .insert({ id: randomUUID(), ...key })
    .returning("*");
  return row;
}

/** The key with this hash that is not revoked; undefined when unknown or revoked. */
export function findActiveKey(db: Db, keyHash: string): Promise<ApiKeyRow | undefined> {
  return db<ApiKeyRow>(TABLES.apiKeys).where({ key_hash: keyHash }).whereNull("revoked_at").first();
}

/** Marks the key with this hash revoked; false when unknown or already revoked. */
export async function revokeKeyByHash(db: Db, keyHash: string): Promise<boolean> {
  const count = await db(TABLES.apiKeys)
    .where({ key_hash: keyHash })
    .whereNull("revoked_at")
    .update({ revoked_at: db.fn.now() });
  return count > 0;
}

/**
 * Records a use of the key: last_used_at moves only when it is unset or over a minute old, so
 * a busy key costs one write a minute, not one per request.
 */
export async function touchKey(db: Db, id: string): Promise<void> {
  await db(TABLES.apiKeys)
    .where({ id })
    .andWhere((q) => q.whereNull("last_used_at").orWhere("last_used_at", "<", db.raw("now() - interval '1 minute'")))
    .update({ last_used_at: db.fn.now() });
}

/**
 * Which keys a listing or a revocation may see: a user's personal keys, an organization's, all
 * of a user's, or (operator CLI) any.
 */
export type KeyScope =
  | { userId: string; organizationId: null }
  | { organizationId: string }
  | { userId: string }
  | { all: true };

function scoped(db: Db, scope: KeyScope) {
  const q = db<ApiKeyRow>(TABLES.apiKeys).whereNull("revoked_at");
  if ("organizationId" in scope && scope.organizationId) q.where({ organization_id: scope.organizationId });
  if ("userId" in scope) q.where({ user_id: scope.userId });
  if ("organizationId" in scope && scope.organizationId === null) q.whereNull("organization_id");
  return q;
}

/** The active keys of `scope`, newest first. */
export function listKeys(db: Db, scope: KeyScope): Promise<ApiKeyRow[]> {
  return scoped(db, scope).orderBy([
    { column: "created_at", order: "desc" },
    { column: "id", order: "desc" },
  ]);
}

/** Revokes the active key `id` if it is in `scope`; false otherwise (unknown, revoked, or not in scope). */
export async function revokeKeyById(db: Db, id: string, scope: KeyScope): Promise<boolean> {
  return (await scoped(db, scope).where({ id }).update({ revoked_at: db.fn.now() })) > 0;
}

/** Revokes every active key of the user that acts for the organization (a member removed); how many. */
export function revokeMemberKeys(db: Db, userId: string, organizationId: string): Promise<number> {
  return db(TABLES.apiKeys)
    .where({ user_id: userId, organization_id: organizationId })
    .whereNull("revoked_at")
    .update({ revoked_at: db.fn.now() });
}

/** The key by id, revoked or not; undefined when unknown. */
export function findKeyById(db: Db, id: string): Promise<ApiKeyRow | undefined> {
  return db<ApiKeyRow>(TABLES.apiKeys).where({ id }).first();
}

/** Live keys of `scope` (a user's personal keys, or an organization's). */
export async function countLiveKeys(
  db: Db,
  scope: { userId: string; organizationId: null } | { organizationId: string },
): Promise<number> {
  const row = await scoped(db, scope).count<{ n: string }[]>({ n: "*" }).first();
  return Number(row?.n ?? 0);
}

/** Revokes every live key the user holds, personal and organization (a takeover); how many. */
export function revokeAllKeysOf(db: Db, userId: string): Promise<number> {
  return db(TABLES.apiKeys).where({ user_id: userId }).whereNull("revoked_at").update({ revoked_at: db.fn.now() });
}
