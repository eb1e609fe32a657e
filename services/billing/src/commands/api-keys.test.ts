// API keys on a real database: only hashes are stored, revoked and malformed keys are refused,
// organization keys bill the organization (interface-spec Authentication).
import { InputError, type Knex, UnauthenticatedError } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TABLES } from "../db/tables.js";
import { openTestDb } from "../db/test-db.js";
import {
  createApiKey,
  createOwnApiKey,
  hashKey,
  listOwnApiKeys,
  resolveApiKey,
  revokeApiKey,
  revokeOwnApiKey,
} from "./api-keys.js";

let db: Knex;
beforeAll(async () => {
  db = await openTestDb("billing_api_keys");
});
afterAll(() => db?.destroy());

describe("createApiKey", () => {
  it("returns sk_ + 32 hex and stores only its hash and prefix", async () => {
    const { apiKey, principal } = await createApiKey(db, { user: "hash-only" });
    expect(apiKey).toMatch(/^sk_[0-9a-f]{32}$/);
    expect(principal).toMatchObject({ organizationId: "", ownerId: principal.userId, plan: "free" });
    const rows = await db(TABLES.apiKeys).where({ user_id: principal.userId });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ key_hash: hashKey(apiKey), key_prefix: apiKey.slice(0, 7), revoked_at: null });
    expect(JSON.stringify(rows)).not.toContain(apiKey);
  });

  it("makes the organization the owner, with the plan set on it", async () => {
    const { principal } = await createApiKey(db, { user: "member", organization: "acme", plan: "pro" });
    expect(principal.organizationId).not.toBe("");
    expect(principal).toMatchObject({ ownerId: principal.organizationId, plan: "pro" });
    const again = await createApiKey(db, { user: "member", organization: "acme" });
    expect(again.principal).toEqual(principal);
  });

  it("refuses a missing user or an unknown plan before writing anything", async () => {
    await expect(createApiKey(db, { user: "" })).rejects.toBeInstanceOf(InputError);
    await expect(createApiKey(db, { user: "typo", plan: "platinum" })).rejects.toThrow(/unknown plan 'platinum'/);
    expect(await db(TABLES.accounts).where({ name: "typo" })).toEqual([]);
  });
});

describe("resolveApiKey and revokeApiKey", () => {
  it("resolves a key to its principal and key id", async () => {
    const { apiKey, principal } = await createApiKey(db, { user: "resolver", plan: "plus" });
    const resolved = await resolveApiKey(db, apiKey);
    expect(resolved).toMatchObject(principal);
    // The account name is what human saves are attributed to (tracked changes).
    expect(resolved.userName).toBe("resolver");
    expect(resolved.keyId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("refuses revoked keys; a second revoke reports false", async () => {
    const { apiKey } = await createApiKey(db, { user: "revoker" });
    expect(await revokeApiKey(db, apiKey)).toBe(true);
    expect(await revokeApiKey(db, apiKey)).toBe(false);
    await expect(resolveApiKey(db, apiKey)).rejects.toMatchObject({ httpStatus: 401 });
  });

  it("refuses malformed and unknown keys with 401", async () => {
    await expect(resolveApiKey(db, "sk_short")).rejects.toBeInstanceOf(UnauthenticatedError);
    await expect(resolveApiKey(db, `sk_${"0".repeat(32)}`)).rejects.toBeInstanceOf(UnauthenticatedError);
    expect(await revokeApiKey(db, "sk_unknown")).toBe(false);
  });
});

describe("named, read-only keys and their last use", () => {
  it("resolves read_only and records a use at most once a minute", async () => {
    const { apiKey, key } = await createApiKey(db, { user: "ro-user", name: "viewer", readOnly: true });
    expect(key).toMatchObject({ name: "viewer", read_only: true, last_used_at: null });
    expect((await resolveApiKey(db, apiKey)).readOnly).toBe(true);
    const first = (await db(TABLES.apiKeys).where({ id: key.id }).first()).last_used_at as Date;
    expect(first).toBeInstanceOf(Date);
    await resolveApiKey(db, apiKey);
    const second = (await db(TABLES.apiKeys).where({ id: key.id }).first()).last_used_at as Date;
    expect(second.getTime()).toBe(first.getTime());
  });

  it("lists and revokes only the caller's own personal keys", async () => {
    const mine = await createApiKey(db, { user: "own-a" });
    const theirs = await createApiKey(db, { user: "own-b" });
    const extra = await createOwnApiKey(db, mine.principal, { name: "  second  " }, 25);
    expect(extra.row.name).toBe("second");
    expect((await listOwnApiKeys(db, mine.principal)).map((k) => k.id)).toEqual([extra.row.id, mine.key.id]);
    await expect(revokeOwnApiKey(db, theirs.principal, extra.row.id)).rejects.toMatchObject({ httpStatus: 404 });
    await expect(revokeOwnApiKey(db, mine.principal, "garbage")).rejects.toMatchObject({ httpStatus: 404 });
    await revokeOwnApiKey(db, mine.principal, extra.row.id);
    expect((await listOwnApiKeys(db, mine.principal)).map((k) => k.id)).toEqual([mine.key.id]);
    await expect(createOwnApiKey(db, mine.principal, { name: "x".repeat(101) }, 25)).rejects.toMatchObject({
      httpStatus: 400,
    });
  });
});

describe("the cap on live keys per account", () => {
  it("refuses past the cap with 409 key_limit, even when the requests race, and frees a slot on revoke", async () => {
    const first = await createApiKey(db, { user: "capped-user" });
    const cap = 5;
    const attempts = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => createOwnApiKey(db, first.principal, { name: `k${i}` }, cap)),
    );
    const made = attempts.filter((a) => a.status === "fulfilled");
    expect(made).toHaveLength(cap - 1);
    for (const a of attempts.filter((a) => a.status === "rejected")) {
      expect((a as PromiseRejectedResult).reason).toMatchObject({ httpStatus: 409, body: { code: "key_limit" } });
    }
    expect(await listOwnApiKeys(db, first.principal)).toHaveLength(cap);
    await revokeOwnApiKey(
      db,
      first.principal,
      (made[0] as PromiseFulfilledResult<{ row: { id: string } }>).value.row.id,
    );
    await expect(createOwnApiKey(db, first.principal, {}, cap)).resolves.toBeDefined();
  });

  it("refuses a new key to a caller whose own key was revoked meanwhile", async () => {
    const gone = await createApiKey(db, { user: "revoked-caller" });
    const principal = await resolveApiKey(db, gone.apiKey);
    await revokeApiKey(db, gone.apiKey);
    await expect(createOwnApiKey(db, principal, {}, 25)).rejects.toBeInstanceOf(UnauthenticatedError);
  });
});
