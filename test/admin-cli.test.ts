// The operator CLI against a real billing service: keys create (named, read-only), list (never
// the key) and revoke by id; orgs create, add-member with a role, remove-member (which revokes
// the member's organization keys).
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { type RunningService, startBillingService } from "@redline/billing";
import { accountsV1 } from "@redline/grpc-stubs";
import { createTestDatabase } from "@redline/local-infra";
import { createRpcClient, type RpcClient } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

const run = promisify(execFile);
let billing: RunningService;
let client: RpcClient<typeof accountsV1.AccountsServiceService>;

beforeAll(async () => {
  const databaseUrl = await createTestDatabase(inject("infra").databaseUrl, "admin_cli");
  billing = await startBillingService({ grpcAddress: "127.0.0.1:0", databaseUrl, logLevel: "silent" });
  client = createRpcClient(accountsV1.AccountsServiceService, billing.address);
});
afterAll(async () => {
  client?.close();
  await billing?.close();
});

async function admin(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  const tsx = join(import.meta.dirname, "..", "node_modules", ".bin", "tsx");
  try {
    const { stdout, stderr } = await run(tsx, [join(import.meta.dirname, "..", "scripts", "admin.ts"), ...args], {
      env: { ...process.env, BILLING_ADDR: billing.address },
    });
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

describe("admin keys", () => {
  it("creates a named read-only key, lists it without the key, and revokes it by id", async () => {
    const created = await admin("keys", "create", "--user", "cli-ann", "--name", "viewer", "--read-only");
    expect(created.code, created.stderr).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^sk_[0-9a-f]{32}$/);
    expect((await client.resolveApiKey({ apiKey: key })).principal?.readOnly).toBe(true);

    const listed = await admin("keys", "list", "--user", "cli-ann");
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).not.toContain(key);
    const [id, prefix, mode, scope, , lastUsed, name] = listed.stdout.trim().split("\t");
    expect([prefix, mode, scope, name]).toEqual([key.slice(0, 7), "read-only", "personal", "viewer"]);
    expect(lastUsed).not.toBe("never-used");

    const revoked = await admin("keys", "revoke", id);
    expect(revoked.code, revoked.stderr).toBe(0);
    await expect(client.resolveApiKey({ apiKey: key })).rejects.toMatchObject({ httpStatus: 401 });
    const again = await admin("keys", "revoke", id);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/not found/i);
  });
});

describe("admin orgs", () => {
  it("creates an organization with an owner, adds and removes members", async () => {
    expect((await admin("orgs", "create", "cli-co", "--owner", "cli-boss")).code).toBe(0);
    const added = await admin("orgs", "add-member", "cli-co", "cli-dev", "--role", "admin");
    expect(added.code, added.stderr).toBe(0);
    expect(added.stderr).toContain("cli-dev is admin");
    const devKey = (await admin("keys", "create", "--user", "cli-dev", "--org", "cli-co")).stdout.trim();
    expect((await client.resolveApiKey({ apiKey: devKey })).principal?.organizationId).not.toBe("");

    const removed = await admin("orgs", "remove-member", "cli-co", "cli-dev");
    expect(removed.code, removed.stderr).toBe(0);
    await expect(client.resolveApiKey({ apiKey: devKey })).rejects.toMatchObject({ httpStatus: 401 });
    const lastOwner = await admin("orgs", "remove-member", "cli-co", "cli-boss");
    expect(lastOwner.code).toBe(2);
    expect(lastOwner.stderr).toMatch(/at least one owner/);
    const badRole = await admin("orgs", "add-member", "cli-co", "cli-x", "--role", "king");
    expect(badRole.code).toBe(2);
    expect(badRole.stderr).toMatch(/role must be/);
  });
});
