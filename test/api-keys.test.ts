// API keys over HTTP (interface-spec Authentication rule 2) on the real stack: a user creates,
// lists and revokes their own personal keys; the key is shown once and stored hashed; another
// user's key is a 404; a read-only key passes GET and gets 403 on every write, before anything
// is written; a key's last use shows in the listing.
import { createDb, type Knex } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startTestStack, type TestStack } from "./support/stack.js";

let stack: TestStack;
let billingDb: Knex;

beforeAll(async () => {
  // No auth cache: a revocation must show on the very next request.
  stack = await startTestStack(inject("infra"), { name: "api_keys", authCacheTtlMs: 0 });
  billingDb = createDb(stack.databaseUrl, "billing");
});
afterAll(async () => {
  await billingDb?.destroy();
  await stack?.close();
});

async function json(res: Response, status: number): Promise<Record<string, unknown>> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as Record<string, unknown>;
}

async function listKeys(key: string): Promise<Record<string, unknown>[]> {
  const body = await json(await stack.call("GET", "/v1/api-keys", { key }), 200);
  return body.api_keys as Record<string, unknown>[];
}

describe("personal API keys", () => {
  it("creates a key shown once, stored only as a hash, that authenticates as the same user", async () => {
    const admin = await stack.createKey("keys-alice");
    const me = await json(await stack.call("GET", "/v1/users/me", { key: admin }), 200);
    const created = await json(
      await stack.call("POST", "/v1/api-keys", { key: admin, body: { name: "ci runner" } }),
      201,
    );
    expect(created).toMatchObject({ name: "ci runner", read_only: false });
    expect(created.key).toMatch(/^sk_[0-9a-f]{32}$/);
    expect(created.prefix).toBe((created.key as string).slice(0, 7));
    expect(Number.isNaN(Date.parse(created.created_at as string))).toBe(false);
    expect(Object.keys(created).sort()).toEqual(["created_at", "id", "key", "name", "prefix", "read_only"]);

    const viaNew = await json(await stack.call("GET", "/v1/users/me", { key: created.key as string }), 200);
    expect(viaNew.user_id).toBe(me.user_id);

    const rows = await billingDb("api_keys").where({ id: created.id });
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(created.key as string);
  });

  it("lists the user's keys without the keys themselves, with last_used_at only once used", async () => {
    const key = await stack.createKey("keys-bob");
    const unused = await json(await stack.call("POST", "/v1/api-keys", { key, body: {} }), 201);
    const listed = await listKeys(key);
    expect(listed.map((k) => k.id)).toContain(unused.id);
    for (const k of listed) {
      expect(k).not.toHaveProperty("key");
      expect(Object.values(k)).not.toContain(null);
    }
    const fresh = listed.find((k) => k.id === unused.id);
    // No name given and never used: both left out, never null.
    expect(fresh).toEqual({
      id: unused.id,
      prefix: unused.prefix,
      read_only: false,
      created_at: unused.created_at,
    });
    // The calling key has been used by this very listing.
    const calling = listed.find((k) => k.id !== unused.id);
    expect(Date.parse(calling?.last_used_at as string)).toBeGreaterThan(Date.now() - 60_000);
  });

  it("revokes the caller's key; another user's key or an unknown id is a 404 that changes nothing", async () => {
    const carol = await stack.createKey("keys-carol");
    const dave = await stack.createKey("keys-dave");
    const davesSecond = await json(await stack.call("POST", "/v1/api-keys", { key: dave, body: { name: "d2" } }), 201);

    const foreign = await stack.call("DELETE", `/v1/api-keys/${davesSecond.id}`, { key: carol });
    expect((await json(foreign, 404)).detail).toMatch(/not found/i);
    expect((await listKeys(dave)).map((k) => k.id)).toContain(davesSecond.id);
    await json(await stack.call("GET", "/v1/users/me", { key: davesSecond.key as string }), 200);

    await json(await stack.call("DELETE", "/v1/api-keys/00000000-0000-0000-0000-000000000000", { key: carol }), 404);
    await json(await stack.call("DELETE", "/v1/api-keys/not-a-key-id", { key: carol }), 404);

    const revoked = await json(await stack.call("DELETE", `/v1/api-keys/${davesSecond.id}`, { key: dave }), 200);
    expect(revoked).toEqual({ id: davesSecond.id, revoked: true });
    await json(await stack.call("GET", "/v1/users/me", { key: davesSecond.key as string }), 401);
    expect((await listKeys(dave)).map((k) => k.id)).not.toContain(davesSecond.id);
    await json(await stack.call("DELETE", `/v1/api-keys/${davesSecond.id}`, { key: dave }), 404);
  });

  it("refuses a bad name or read_only with 422", async () => {
    const key = await stack.createKey("keys-erin");
    const long = await json(await stack.call("POST", "/v1/api-keys", { key, body: { name: "x".repeat(101) } }), 422);
    expect(JSON.stringify(long.detail)).toContain("name");
    await json(await stack.call("POST", "/v1/api-keys", { key, body: { read_only: "yes" } }), 422);
    expect(await listKeys(key)).toHaveLength(1);
  });
});

describe("read-only keys", () => {
  it("read, and get 403 on every write before anything is written", async () => {
    const owner = await stack.createKey("keys-frank");
    const ro = await json(
      await stack.call("POST", "/v1/api-keys", { key: owner, body: { name: "dashboard", read_only: true } }),
      201,
    );
    expect(ro.read_only).toBe(true);
    const roKey = ro.key as string;

    await json(await stack.call("GET", "/v1/users/me", { key: roKey }), 200);
    expect((await listKeys(roKey)).find((k) => k.id === ro.id)?.read_only).toBe(true);
    await json(await stack.call("GET", "/v1/sessions", { key: roKey }), 200);

    const before = await listKeys(owner);
    const writes: [string, string, unknown][] = [
      ["POST", "/v1/api-keys", { name: "escalate" }],
      ["DELETE", `/v1/api-keys/${ro.id}`, undefined],
      ["PATCH", "/v1/users/me", { email: "ro@example.com" }],
      ["POST", "/v1/sessions/init", { session_id: "ro-s1" }],
    ];
    for (const [method, path, body] of writes) {
      const refused = await json(await stack.call(method, path, { key: roKey, body }), 403);
      expect(refused.detail, `${method} ${path}`).toMatch(/read-only/);
    }
    expect(await listKeys(owner)).toEqual(before);
    const me = await json(await stack.call("GET", "/v1/users/me", { key: owner }), 200);
    expect(me).not.toHaveProperty("email");
    await json(await stack.call("GET", "/v1/sessions/ro-s1/history", { key: owner }), 404);
  });
});
