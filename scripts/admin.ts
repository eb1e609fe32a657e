// `pnpm --silent admin keys create --user alice [--org acme] [--plan free|plus|pro]` prints only
// the new key; `pnpm --silent admin keys revoke KEY` revokes one. Talks to the billing service
// of the running stack (BILLING_ADDR, else the address the supervisor recorded, else the default).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { billingV1 } from "@redline/grpc-stubs";
import { createRpcClient, DEFAULT_ADDRS, RedlineError } from "@redline/service-kit";

const USAGE = `usage:
  admin keys create --user NAME [--org NAME] [--plan free|plus|pro|enterprise]
  admin keys revoke KEY`;

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
  options: { user: { type: "string" }, org: { type: "string" }, plan: { type: "string" } },
});
const [group, verb, arg] = positionals;
if (group !== "keys" || !verb) fail(USAGE);

const billing = createRpcClient(billingV1.BillingServiceService, billingAddress());
try {
  if (verb === "create") {
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
