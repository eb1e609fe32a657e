// Runs s3rver in its own plain-node process (no tsx: tsx 4.20 breaks koa's `generator-function`
// dependency, whose require(esm) entry exports 'module.exports'). Started by s3.ts with its config
// as JSON in REDLINE_S3RVER_CONFIG (env, not argv: argv is world-readable in /proc):
//   {"port":0,"directory":"...","accessKey":"...","secretKey":"...","bucket":"..."}
// Prints one line `READY <port>` on stdout once listening; SIGTERM/SIGINT close it and exit 0.
//
// Security (README, "Security model"): s3rver verifies the signatures it is given but serves
// anonymous requests, and it ships the public key pair S3RVER/S3RVER. Here only requests that carry
// a signature reach it (everything else is a 403 AccessDenied), S3RVER/S3RVER is revoked, and every
// response tells browsers not to run or sniff what it holds.
"use strict";
const S3rver = require("@20minutes/s3rver");
const { DUMMY_ACCOUNT } = require("@20minutes/s3rver/lib/models/account.js");
const S3Error = require("@20minutes/s3rver/lib/models/error.js");

/** Headers on every response: objects are user content, never active in a browser. */
const SAFE_HEADERS = {
  "Content-Security-Policy": "default-src 'none'; sandbox",
  "X-Content-Type-Options": "nosniff",
};

/**
 * True when s3rver's authentication middleware will verify the request: an Authorization header,
 * a v2 `Signature` query, or a v4 `X-Amz-Algorithm` query together with its `X-Amz-Signature`
 * (s3rver checks these exact, case-sensitive names; with none of them it lets the request through).
 */
function carriesSignature(ctx) {
  const q = ctx.query;
  return (
    "authorization" in ctx.headers ||
    Object.hasOwn(q, "Signature") ||
    (Object.hasOwn(q, "X-Amz-Algorithm") && Object.hasOwn(q, "X-Amz-Signature"))
  );
}

/** First middleware: refuses unsigned requests, and marks object responses as inert downloads. */
async function guard(ctx, next) {
  if (!carriesSignature(ctx)) throw new S3Error("AccessDenied", "Access Denied");
  await next();
  ctx.set(SAFE_HEADERS);
  // GET/HEAD of an object (/bucket/key…) without a signed response-content-disposition override.
  const isObject = ctx.path.split("/").filter(Boolean).length >= 2;
  if (isObject && (ctx.method === "GET" || ctx.method === "HEAD") && !ctx.response.get("Content-Disposition"))
    ctx.set("Content-Disposition", "attachment");
}

/** Replaces s3rver's process-wide key registry (only S3RVER/S3RVER built in) with our one pair. */
function installCredentials(accessKey, secretKey) {
  if (!accessKey || !secretKey) throw new Error("s3rver-main: accessKey and secretKey are required");
  for (const key of [...DUMMY_ACCOUNT.accessKeys.keys()]) DUMMY_ACCOUNT.revokeAccessKey(key);
  DUMMY_ACCOUNT.createKeyPair(accessKey, secretKey);
}

function main() {
  const cfg = JSON.parse(process.env.REDLINE_S3RVER_CONFIG || "{}");
  installCredentials(cfg.accessKey, cfg.secretKey);
  const server = new S3rver({
    port: cfg.port,
    address: "127.0.0.1",
    directory: cfg.directory,
    silent: true,
    // Path-style only: an IP endpoint never carries the bucket in the host name.
    vhostBuckets: false,
    configureBuckets: [{ name: cfg.bucket }],
  });
  // S3rver is a Koa app: the guard must run before its logger, router and authentication.
  server.middleware.unshift(guard);
  server.on("error", (err) => {
    // Client errors (403 for unsigned requests and bad signatures, 404…) are answers, not faults.
    if (err instanceof S3Error && err.status < 500) return;
    process.stderr.write(`s3rver error: ${err?.message}\n`);
  });

  let closing = false;
  function shutdown() {
    if (closing) return;
    closing = true;
    const force = setTimeout(() => process.exit(0), 3000);
    force.unref();
    if (server.httpServer) server.httpServer.closeAllConnections();
    server.close().then(
      () => process.exit(0),
      () => process.exit(0),
    );
  }
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
  process.on("disconnect", shutdown);

  server.run().then(
    (address) => process.stdout.write(`READY ${address.port}\n`),
    (err) => {
      process.stderr.write(`${err?.code === "EADDRINUSE" ? "EADDRINUSE: " : ""}${err?.message}\n`);
      process.exit(2);
    },
  );
}

if (require.main === module) main();
module.exports = { carriesSignature, guard, installCredentials, SAFE_HEADERS };
