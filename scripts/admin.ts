// `pnpm --silent admin keys create --user alice [--org acme] [--plan free|plus|pro]` prints only
// the new key; `pnpm --silent admin keys revoke KEY` revokes one. `admin promotions create` prints
// only the new promotion code; `admin accounts set-plan / set-limit` change an account's plan,
// billing anchor day or enterprise limit mid-cycle. Talks to the billing service of the running
// stack (BILLING_ADDR, else the address the supervisor recorded, else the default).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { billingV1 } from "@redline/grpc-stubs";
import { createRpcClient, DEFAULT_ADDRS, RedlineError } from "@redline/service-kit";

const USAGE = `usage:
  admin keys create --user NAME [--org NAME] [--plan free|plus|pro|enterprise]
  admin keys revoke KEY
  admin promotions create --name NAME --ops N --expires DATE [--max-redemptions M]
  admin accounts set-plan (--user NAME | --org NAME | --account ID) --plan free|plus|pro|enterprise [--anchor-day 1-31]
  admin accounts set-limit (--user NAME | --org NAME | --account ID) --ops N`;

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
  },
});
const [group, verb, arg] = positionals;
if (!["keys", "promotions", "accounts"].includes(group ?? "") || !verb) fail(USAGE);

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

const billing = createRpcClient(billingV1.BillingServiceService, billingAddress());
try {
  if (group === "promotions") {
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
      { timeoutMs: 10_000 },
    );
    process.stdout.write(`${res.code}\n`);
  } else if (group === "accounts" && verb === "set-plan") {
    if (!values.plan) fail(USAGE);
    const res = await billing.setAccountPlan(
      { account: accountRef(), plan: values.plan, anchorDay: count("anchor-day", values["anchor-day"]) ?? 0 },
      { timeoutMs: 10_000 },
    );
    process.stderr.write(`account ${res.accountId} is on ${res.usage?.subscriptionTier}\n`);
  } else if (group === "accounts" && verb === "set-limit") {
    const ops = count("ops", values.ops);
    if (ops === undefined) fail(USAGE);
    const res = await billing.setAccountLimit({ account: accountRef(), monthlyLimit: ops }, { timeoutMs: 10_000 });
    process.stderr.write(`account ${res.accountId}: monthly limit ${res.usage?.monthlyLimit}\n`);
  } else if (group !== "keys") {
    fail(USAGE);
  } else if (verb === "create") {
    if (!values.user) fail(USAGE);
    const res = await billing.createApiKey(
      { user: values.user, organization: values.org ?? "", plan: values.plan ?? "" },
      { timeoutMs: 10_000 },
    );
    process.stdout.write(`${res.apiKey}\n`);
  } else if (verb === "revoke") {
    if (!arg) fail(USAGE);
    const res = await billing.revokeApiKey({ apiKey: arg }, { timeoutMs: 10_000 });
    if (!res.revoked) fail("no such active key");
    process.stderr.write("revoked\n");
  } else {
    fail(USAGE);
  }
} catch (err) {
  if (err instanceof RedlineError && err.httpStatus === 503)
    fail("billing is not reachable: start Redline first (pnpm start)");
  fail(err instanceof Error ? err.message : String(err));
} finally {
  billing.close();
}
