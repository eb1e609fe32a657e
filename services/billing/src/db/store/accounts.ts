// Accounts, memberships and API keys: all SQL of billing's identity side. Functions take a
// `Knex | Knex.Transaction`; the command that needs atomicity opens the transaction.
import { randomUUID } from "node:crypto";
import type { Knex } from "@redline/service-kit";
import { type AccountRow, type ApiKeyRow, TABLES } from "../tables.js";

type Db = Knex | Knex.Transaction;

/** The account of `kind` named `name`, created on the free plan when missing. */
export async function upsertAccount(db: Db, kind: AccountRow["kind"], name: string): Promise<AccountRow> {
  await db(TABLES.accounts)
    .insert({ id: randomUUID(), kind, name, plan: "free" })
    .onConflict(["kind", "name"])
    .ignore();
  const row = await db<AccountRow>(TABLES.accounts).where({ kind, name }).first();
  if (!row) throw new Error(`account ${kind}:${name} vanished after its upsert`);
  return row;
}

/** The account by id; undefined when unknown. */
export function findAccount(db: Db, id: string): Promise<AccountRow | undefined> {
  return db<AccountRow>(TABLES.accounts).where({ id }).first();
}

/** Sets (or with null clears) the email on file of an account; the row after, undefined when unknown. */
export async function setAccountEmail(db: Db, id: string, email: string | null): Promise<AccountRow | undefined> {
  const [row] = await db<AccountRow>(TABLES.accounts).where({ id }).update({ email }).returning("*");
  return row;
}

/** Sets an account's plan name. */
export async function setAccountPlan(db: Db, id: string, plan: string): Promise<void> {
  await db(TABLES.accounts).where({ id }).update({ plan });
}

/** Makes the user a member of the organization (a no-op when already one). */
export async function addMembership(db: Db, userId: string, organizationId: string): Promise<void> {
  await db(TABLES.memberships).insert({ user_id: userId, organization_id: organizationId }).onConflict().ignore();
}

/** Stores a key by its hash and prefix only. */
export async function insertApiKey(
  db: Db,
  key: Pick<ApiKeyRow, "key_hash" | "key_prefix" | "user_id" | "organization_id">,
): Promise<void> {
  await db(TABLES.apiKeys).insert({ id: randomUUID(), ...key });
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
