// Entry of localhost/redline-s3:dev, the dev overlay's object store: s3rver on 0.0.0.0:$PORT
// (default 9000) serving /data, with the guard of packages/local-infra's runner (unsigned and
// anonymous requests get 403, responses are inert downloads) and exactly one key pair, from
// S3_ACCESS_KEY and S3_SECRET_KEY (required: s3rver's public S3RVER/S3RVER pair is revoked).
// S3_BUCKET (default "redline") is created when missing. SIGTERM closes it.
"use strict";
const S3rver = require("@20minutes/s3rver");
const S3Error = require("@20minutes/s3rver/lib/models/error.js");
const { guard, installCredentials } = require("./dist/s3rver-main.cjs");

function required(name) {
  const value = process.env[name];
  if (!value) {
    process.stderr.write(
      `${name} is not set: the store accepts only requests signed with S3_ACCESS_KEY/S3_SECRET_KEY\n`,
    );
    process.exit(2);
  }
  return value;
}

installCredentials(required("S3_ACCESS_KEY"), required("S3_SECRET_KEY"));
const port = Number(process.env.PORT || 9000);
const server = new S3rver({
  port,
  address: process.env.HOST || "0.0.0.0",
  directory: "/data",
  silent: true,
  vhostBuckets: false,
  configureBuckets: [{ name: process.env.S3_BUCKET || "redline" }],
});
server.middleware.unshift(guard);
server.on("error", (err) => {
  if (err instanceof S3Error && err.status < 500) return;
  process.stderr.write(`s3rver error: ${err?.message}\n`);
});

function shutdown() {
  setTimeout(() => process.exit(0), 3000).unref();
  server.httpServer?.closeAllConnections();
  server.close().then(
    () => process.exit(0),
    () => process.exit(0),
  );
}
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);

server.run().then(
  (address) => process.stdout.write(`s3rver listening on ${address.address}:${address.port}, data in /data\n`),
  (err) => {
    process.stderr.write(`${err?.message}\n`);
    process.exit(2);
  },
);
