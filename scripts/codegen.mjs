// Regenerates the gRPC stubs from proto/ with ts-proto into packages/grpc-stubs/src/gen.
// Generated code is not committed; build, test, start and bench run this first.
//
// Several processes may run this at once in one checkout (two `pnpm start`, a start and a test
// run) while others import the stubs, so the gen tree is never removed or half written:
// - a stamp (a hash of the proto files, the protoc and ts-proto versions, the options and this
//   script) makes a run whose inputs did not change a no-op;
// - otherwise protoc writes into a temporary directory next to the target, which is renamed into
//   place when there is no tree yet, or whose files are renamed one by one over the old ones
//   (a rename replaces a file atomically: a reader sees the old file or the new one, never a part);
//   files of removed protos go last, and the stamp is written only after the tree is complete.
//
// Then the typed HTTP client's files (packages/client/src/gen: openapi.json and schema.ts, which
// are committed) are rebuilt from the gateway's route registry by packages/client/scripts/generate.ts,
// which writes a file only when its content changes (by renaming a complete copy over it). A stamp
// of its inputs (the gateway's and service-kit's sources, the lockfile, the generator, the outputs)
// in .redline/ skips the few seconds that takes when nothing changed.
//
// Last, the review playground (packages/playground, served by the gateway at /playground) is built
// with Vite into packages/playground/dist, also behind a stamp of its inputs (its sources, the
// client's sources it bundles, the lockfile, this script): a temporary tree is built next to dist/
// and swapped in whole, so the gateway serves the old build or the new one.
//
// Usage: node scripts/codegen.mjs [--force] [--out <dir>]
//   --force  regenerate even when the stamp says the tree is up to date
//   --out    another target directory (tests); it must sit under the workspace for the
//            generated files' imports (@grpc/grpc-js, @bufbuild/protobuf) to resolve. Only the
//            stubs are generated then, not the client's files nor the playground.
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const scriptPath = fileURLToPath(import.meta.url);
const root = join(dirname(scriptPath), "..");
const protoDir = join(root, "proto");
const defaultOutDir = join(root, "packages/grpc-stubs/src/gen");
const TS_PROTO_OPTIONS =
  "outputServices=grpc-js,esModuleInterop=true,importSuffix=.js,useDate=true,useOptionals=messages,env=node,forceLong=number";
/** The stamp's file name inside the gen tree: JSON {hash, files} (files relative to the tree). */
export const STAMP_FILE = ".codegen-stamp.json";
/** Temporary trees are `<parent>/.codegen-<pid>-<hex>/gen`; the leading dot keeps tsc globs off them. */
const TMP_PREFIX = ".codegen-";
/** A temporary tree older than this was left by a crashed run and is removed (ms). */
const STALE_TMP_MS = 10 * 60_000;

/** Every file under dir, as paths relative to base, sorted. */
function listFiles(dir, base = dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      return entry.isDirectory() ? listFiles(path, base) : [relative(base, path)];
    })
    .sort();
}

/** The hash of everything the generated tree depends on (hex sha256). */
function inputsHash() {
  const require = createRequire(join(root, "package.json"));
  const hash = createHash("sha256");
  for (const pkg of ["protoc", "ts-proto"]) hash.update(`${pkg}@${require(`${pkg}/package.json`).version}\n`);
  hash.update(`${TS_PROTO_OPTIONS}\n`);
  hash.update(readFileSync(scriptPath));
  for (const file of listFiles(protoDir).filter((name) => name.endsWith(".proto"))) {
    hash.update(`\n${file}\n`);
    hash.update(readFileSync(join(protoDir, file)));
  }
  return hash.digest("hex");
}

/** True when outDir holds a complete tree generated from the inputs with this hash. */
function upToDate(outDir, hash) {
  try {
    const stamp = JSON.parse(readFileSync(join(outDir, STAMP_FILE), "utf8"));
    return stamp.hash === hash && stamp.files.every((file) => existsSync(join(outDir, file)));
  } catch {
    return false;
  }
}

/** Removes temporary trees that crashed runs left next to outDir. */
function removeStaleTmp(parent) {
  if (!existsSync(parent)) return;
  for (const name of readdirSync(parent)) {
    if (!name.startsWith(TMP_PREFIX)) continue;
    const path = join(parent, name);
    try {
      if (Date.now() - statSync(path).mtimeMs > STALE_TMP_MS) rmSync(path, { recursive: true, force: true });
    } catch {
      // Another run removed it first.
    }
  }
}

/** Runs protoc + ts-proto on every proto file into dir. */
function generate(dir) {
  mkdirSync(dir, { recursive: true });
  const bin = join(root, "node_modules/.bin");
  execFileSync(
    join(bin, "protoc"),
    [
      `--plugin=protoc-gen-ts_proto=${join(bin, "protoc-gen-ts_proto")}`,
      `--ts_proto_out=${dir}`,
      `--ts_proto_opt=${TS_PROTO_OPTIONS}`,
      `-I${protoDir}`,
      ...listFiles(protoDir).filter((name) => name.endsWith(".proto")),
    ],
    { stdio: "inherit" },
  );
}

/** Writes a file by renaming a complete temporary copy over it. */
function writeAtomic(path, text) {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/** Moves the generated files of tmpDir into outDir without outDir ever being absent or partial. */
function install(tmpDir, outDir, files) {
  if (!existsSync(outDir)) {
    try {
      renameSync(tmpDir, outDir);
      return;
    } catch (error) {
      // A concurrent run installed its tree first: fall through to the per-file swap.
      if (error.code !== "ENOTEMPTY" && error.code !== "EEXIST") throw error;
    }
  }
  for (const file of files) {
    mkdirSync(dirname(join(outDir, file)), { recursive: true });
    renameSync(join(tmpDir, file), join(outDir, file));
  }
  const keep = new Set([...files, STAMP_FILE]);
  for (const file of listFiles(outDir)) {
    // Files of protos that no longer exist; a concurrent run's in-flight stamp copy is its own.
    if (!keep.has(file) && !basename(file).startsWith(`${STAMP_FILE}.`)) rmSync(join(outDir, file), { force: true });
  }
}

/**
 * Brings the gen tree at outDir up to date with proto/.
 * Returns "skipped" when the stamp matched, "generated" otherwise; throws when protoc fails
 * (the existing tree is then left as it was).
 */
export function codegen({ outDir = defaultOutDir, force = false } = {}) {
  const target = resolve(outDir);
  const parent = dirname(target);
  const hash = inputsHash();
  if (!force && upToDate(target, hash)) return "skipped";
  mkdirSync(parent, { recursive: true });
  removeStaleTmp(parent);
  const tmpRoot = join(parent, `${TMP_PREFIX}${process.pid}-${randomBytes(4).toString("hex")}`);
  const tmpDir = join(tmpRoot, basename(target));
  try {
    generate(tmpDir);
    const files = listFiles(tmpDir);
    install(tmpDir, target, files);
    // Last: the stamp vouches for a tree that is already complete.
    writeAtomic(join(target, STAMP_FILE), JSON.stringify({ hash, files }));
  } finally {
    rmSync(tmpRoot, { recursive: true, force: true });
  }
  return "generated";
}

const clientGenerator = join(root, "packages/client/scripts/generate.ts");
const clientGenDir = join(root, "packages/client/src/gen");
const clientStamp = join(root, ".redline/client-codegen-stamp.json");

/** The hash of what the client's generated files depend on, the files themselves included (hex sha256). */
function clientInputsHash() {
  const hash = createHash("sha256");
  const sources = ["services/gateway/src", "packages/service-kit/src"].flatMap((dir) =>
    listFiles(join(root, dir))
      .filter((file) => file.endsWith(".ts") && !file.endsWith(".test.ts"))
      .map((file) => join(dir, file)),
  );
  for (const file of [...sources, "pnpm-lock.yaml", relative(root, clientGenerator)]) {
    hash.update(`\n${file}\n`);
    hash.update(readFileSync(join(root, file)));
  }
  for (const file of ["openapi.json", "schema.ts"]) {
    hash.update(`\n${file}\n`);
    hash.update(existsSync(join(clientGenDir, file)) ? readFileSync(join(clientGenDir, file)) : "");
  }
  return hash.digest("hex");
}

/**
 * Brings packages/client/src/gen up to date with the gateway's OpenAPI document (the generator
 * runs under tsx: it imports the gateway's TypeScript sources). Returns "skipped" or "generated".
 */
export function clientCodegen({ force = false } = {}) {
  const hash = clientInputsHash();
  try {
    if (!force && JSON.parse(readFileSync(clientStamp, "utf8")).hash === hash) return "skipped";
  } catch {
    // No stamp yet.
  }
  execFileSync(join(root, "node_modules/.bin/tsx"), ["--conditions=@redline/source", clientGenerator], {
    cwd: root,
    stdio: "inherit",
  });
  mkdirSync(dirname(clientStamp), { recursive: true });
  // The outputs are part of the hash: computed after the generator wrote them.
  writeAtomic(clientStamp, JSON.stringify({ hash: clientInputsHash() }));
  return "generated";
}

const playgroundDir = join(root, "packages/playground");
const playgroundDist = join(playgroundDir, "dist");
/** The playground's stamp inside its dist/ (not served: the gateway serves no dot files). */
const PLAYGROUND_STAMP = ".build-stamp.json";

/** The hash of what the playground's build depends on (hex sha256). */
function playgroundInputsHash() {
  const hash = createHash("sha256");
  hash.update(readFileSync(scriptPath));
  const sources = ["packages/playground/src", "packages/client/src"].flatMap((dir) =>
    listFiles(join(root, dir))
      .filter((file) => !file.endsWith(".test.ts"))
      .map((file) => join(dir, file)),
  );
  const configs = ["index.html", "vite.config.ts", "package.json", "tsconfig.json"].map(
    (f) => `packages/playground/${f}`,
  );
  for (const file of [...configs, ...sources, "packages/client/package.json", "pnpm-lock.yaml"]) {
    hash.update(`\n${file}\n`);
    hash.update(readFileSync(join(root, file)));
  }
  return hash.digest("hex");
}

/**
 * Builds packages/playground/dist with Vite when its inputs changed (or `force`). Returns
 * "skipped" or "built"; throws when the build fails (the old dist/ is then left as it was).
 */
export function playgroundBuild({ force = false } = {}) {
  const hash = playgroundInputsHash();
  try {
    const stamp = JSON.parse(readFileSync(join(playgroundDist, PLAYGROUND_STAMP), "utf8"));
    if (!force && stamp.hash === hash && existsSync(join(playgroundDist, "index.html"))) return "skipped";
  } catch {
    // No build yet.
  }
  removeStaleTmp(playgroundDir);
  const tmp = join(playgroundDir, `${TMP_PREFIX}${process.pid}-${randomBytes(4).toString("hex")}`);
  const old = `${tmp}-old`;
  try {
    execFileSync(
      join(playgroundDir, "node_modules/.bin/vite"),
      ["build", "--outDir", tmp, "--emptyOutDir", "--logLevel", "warn"],
      { cwd: playgroundDir, stdio: "inherit" },
    );
    writeFileSync(join(tmp, PLAYGROUND_STAMP), JSON.stringify({ hash }));
    try {
      renameSync(playgroundDist, old);
    } catch (error) {
      if (error.code !== "ENOENT") throw error;
    }
    renameSync(tmp, playgroundDist);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    rmSync(old, { recursive: true, force: true });
  }
  return "built";
}

if (process.argv[1] && pathToFileURL(resolve(process.argv[1])).href === import.meta.url) {
  const { values } = parseArgs({
    options: { force: { type: "boolean", default: false }, out: { type: "string" } },
  });
  const outcome = codegen({ outDir: values.out ?? defaultOutDir, force: values.force });
  if (outcome === "skipped")
    console.log(`codegen: ${relative(root, resolve(values.out ?? defaultOutDir))} is up to date`);
  if (!values.out) clientCodegen({ force: values.force });
  if (!values.out) playgroundBuild({ force: values.force });
}
