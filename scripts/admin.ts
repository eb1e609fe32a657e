// Operator CLI over the billing process of the running stack, its AccountsService and
// BillingService (BILLING_ADDR, else the address the supervisor recorded, else the default):
//   `pnpm --silent admin keys create --user alice [--org acme] [--plan pro] [--name ci] [--read-only]`
//   prints only the new key; `keys list --user alice` prints the user's active keys (never the
//   keys themselves); `keys revoke KEY|ID` revokes one; `orgs create|add-member|remove-member`
//   manage organizations and their members' roles. `admin promotions create` prints only the new
//   promotion code; `admin accounts set-plan / set-limit` change an account's plan, billing anchor
//   day or enterprise limit mid-cycle.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { accountsV1, billingV1 } from "@redline/grpc-stubs";
import { createRpcClient, DEFAULT_ADDRS, isUuid, RedlineError } from "@redline/service-kit";

const USAGE = `usage:
  admin keys create --user NAME [--org NAME] [--plan free|plus|pro|enterprise] [--name LABEL] [--read-only]
  admin keys list --user NAME
  admin keys revoke KEY|KEY_ID
  admin orgs create NAME --owner USER
  admin orgs add-member ORG USER [--role owner|admin|member]
  admin orgs remove-member ORG USER
  admin promotions create --name NAME --ops N --expires DATE [--max-redemptions M]
  admin accounts set-plan (--user NAME | --org NAME | --account ID) --plan none|free|plus|pro|enterprise [--anchor-day 1-31]
  admin accounts set-limit (--user NAME | --org NAME | --account ID) --ops N
(ORG and USER of keys/orgs are names or ids; names unknown to create and add-member are created)`;

function billingAddress(): string {
  if (process.env.BILLING_ADDR) return process.env.BILLING_ADDR;
  const stackFile = join(process.env.REDLINE_DATA_DIR ?? join(import.meta.dirname, "..", ".redline"), "stack.json");
  if (existsSync(stackFile)) {
    const stack = JSON.parse(readFileSync(stackFile, "utf8")) as { addrs?: { billing?: string } };
    if (stack.addrs?.billing) return stack.addrs.billing;
  }
  return DEFAULT_ADDRS.billing;
}

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    user: { type: "string" },
    org: { type: "string" },
    plan: { type: "string" },
    account: { type: "string" },
    name: { type: "string" },
    ops: { type: "string" },
    expires: { type: "string" },
    "max-redemptions": { type: "string" },
    "anchor-day": { type: "string" },
    "read-only": { type: "boolean" },
    owner: { type: "string" },
    role: { type: "string" },
  },
});
const [group, verb, ...args] = positionals;
if (!["keys", "orgs", "promotions", "accounts"].includes(group ?? "") || !verb) fail(USAGE);

const opts = { timeoutMs: 10_000 };

/** A whole number option, or a usage error naming it; undefined when absent. */
function count(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) fail(`--${name} must be a whole number`);
  return Number(value);
}

/** --expires as a Date: a date (end of that day, UTC) or a full ISO 8601 timestamp. */
function expiry(value: string | undefined): Date {
  if (!value) fail(USAGE);
  const at = new Date(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T23:59:59.999Z` : value);
  if (Number.isNaN(at.getTime())) fail("--expires must be a date (YYYY-MM-DD) or an ISO 8601 timestamp");
  return at;
}

/** The account an `accounts` command is about. */
function accountRef() {
  if (!values.account && !values.user && !values.org) fail(USAGE);
  return { accountId: values.account ?? "", user: values.user ?? "", organization: values.org ?? "" };
}

// Keys, organizations and members are AccountsService's; promotions and plans BillingService's.
const accountsClient = createRpcClient(accountsV1.AccountsServiceService, billingAddress());
const billing = createRpcClient(billingV1.BillingServiceService, billingAddress());

/** One line per key: id, prefix, read-only flag, organization, created, last used, name. */
function printKeys(keys: accountsV1.ApiKeyInfo[]): void {
  for (const k of keys) {
    const cols = [
      k.id,
      k.prefix,
      k.readOnly ? "read-only" : "read-write",
      k.organizationId || "personal",
      k.createdAt?.toISOString() ?? "",
      k.lastUsedAt?.toISOString() ?? "never-used",
      k.name,
    ];
    process.stdout.write(`${cols.join("\t")}\n`);
  }
}

async function keys(): Promise<void> {
  if (verb === "create") {
    if (!values.user) fail(USAGE);
    const res = await accountsClient.createApiKey(
      {
        user: values.user,
        organization: values.org ?? "",
        plan: values.plan ?? "",
        name: values.name ?? "",
        readOnly: values["read-only"] ?? false,
      },
      opts,
    );
    process.stdout.write(`${res.apiKey}\n`);
  } else if (verb === "list") {
    if (!values.user) fail(USAGE);
    printKeys((await accountsClient.adminListApiKeys({ user: values.user }, opts)).keys);
  } else if (verb === "revoke") {
    const [ref] = args;
    if (!ref) fail(USAGE);
    // A key id revokes without the key at hand (keys list shows ids, never keys).
    if (isUuid(ref)) await accountsClient.adminRevokeApiKeyById({ id: ref }, opts);
    else if (!(await accountsClient.revokeApiKey({ apiKey: ref }, opts)).revoked) fail("no such active key");
    process.stderr.write("revoked\n");
  } else {
    fail(USAGE);
  }
}

async function orgs(): Promise<void> {
  const [org, user] = args;
  if (verb === "create") {
    if (!org || !values.owner) fail(USAGE);
    const res = await accountsClient.adminAddMember({ organization: org, user: values.owner, role: "owner" }, opts);
    process.stderr.write(`organization ${org}: ${res.member?.name ?? values.owner} is an owner\n`);
  } else if (verb === "add-member") {
    if (!org || !user) fail(USAGE);
    const res = await accountsClient.adminAddMember({ organization: org, user, role: values.role ?? "" }, opts);
    process.stderr.write(`organization ${org}: ${res.member?.name ?? user} is ${res.member?.role ?? "a member"}\n`);
  } else if (verb === "remove-member") {
    if (!org || !user) fail(USAGE);
    await accountsClient.adminRemoveMember({ organization: org, user }, opts);
    process.stderr.write(`organization ${org}: ${user} removed, their organization keys revoked\n`);
  } else {
    fail(USAGE);
  }
}

async function promotions(): Promise<void> {
  if (verb !== "create" || !values.name) fail(USAGE);
  const ops = count("ops", values.ops);
  if (ops === undefined) fail(USAGE);
  const res = await billing.createPromotion(
    {
      name: values.name,
      ops,
      expiresAt: expiry(values.expires),
      maxRedemptions: count("max-redemptions", values["max-redemptions"]) ?? 0,
    },
    opts,
  );
  process.stdout.write(`${res.code}\n`);
}

async function accounts(): Promise<void> {
  if (verb === "set-plan") {
    if (!values.plan) fail(USAGE);
    const res = await billing.setAccountPlan(
      { account: accountRef(), plan: values.plan, anchorDay: count("anchor-day", values["anchor-day"]) ?? 0 },
      opts,
    );
    process.stderr.write(`account ${res.accountId} is on ${res.usage?.subscriptionTier}\n`);
  } else if (verb === "set-limit") {
    const ops = count("ops", values.ops);
    if (ops === undefined) fail(USAGE);
    const res = await billing.setAccountLimit({ account: accountRef(), monthlyLimit: ops }, opts);
    process.stderr.write(`account ${res.accountId}: monthly limit ${res.usage?.monthlyLimit}\n`);
  } else {
    fail(USAGE);
  }
}

const commands: Record<string, () => Promise<void>> = { keys, orgs, promotions, accounts };
try {
  await commands[group]();
} catch (err) {
  if (err instanceof RedlineError && err.httpStatus === 503)
    fail("billing is not reachable: start Redline first (pnpm start)");
  fail(err instanceof RedlineError && typeof err.detail === "string" ? err.detail : String(err));
} finally {
  accountsClient.close();
  billing.close();
}
