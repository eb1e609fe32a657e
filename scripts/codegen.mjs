// Regenerates the gRPC stubs from proto/ with ts-proto into packages/grpc-stubs/src/gen.
// Generated code is not committed; build, test, start and bench run this first.
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const protoDir = join(root, "proto");
const outDir = join(root, "packages/grpc-stubs/src/gen");

function protoFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return protoFiles(path);
    return name.endsWith(".proto") ? [relative(protoDir, path)] : [];
  });
}

rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });
const bin = join(root, "node_modules/.bin");
execFileSync(
  join(bin, "protoc"),
  [
    `--plugin=protoc-gen-ts_proto=${join(bin, "protoc-gen-ts_proto")}`,
    `--ts_proto_out=${outDir}`,
    "--ts_proto_opt=outputServices=grpc-js,esModuleInterop=true,importSuffix=.js,useDate=true,useOptionals=messages,env=node,forceLong=number",
    `-I${protoDir}`,
    ...protoFiles(protoDir),
  ],
  { stdio: "inherit" },
);
