// Runs s3rver in its own plain-node process (no tsx: tsx 4.20 breaks koa's `generator-function`
// dependency, whose require(esm) entry exports 'module.exports'). Started by s3.ts:
//   node s3rver-main.cjs '{"port":0,"directory":"...","accessKey":"...","secretKey":"...","bucket":"..."}'
// Prints one line `READY <port>` on stdout once listening; SIGTERM/SIGINT close it and exit 0.
"use strict";
const S3rver = require("@20minutes/s3rver");
const { DUMMY_ACCOUNT } = require("@20minutes/s3rver/lib/models/account.js");

const cfg = JSON.parse(process.argv[2]);
// s3rver keeps a process-wide key registry with only S3RVER/S3RVER built in.
DUMMY_ACCOUNT.createKeyPair(cfg.accessKey, cfg.secretKey);
const server = new S3rver({
  port: cfg.port,
  address: "127.0.0.1",
  directory: cfg.directory,
  silent: true,
  // Path-style only: an IP endpoint never carries the bucket in the host name.
  vhostBuckets: false,
  configureBuckets: [{ name: cfg.bucket }],
});
server.on("error", (err) => process.stderr.write(`s3rver error: ${err?.message}\n`));

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
