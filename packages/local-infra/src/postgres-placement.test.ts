// Placement of embedded Postgres when we are root: the staged distribution (complete and shared
// by concurrent stagers) and the relocation of a cluster the "postgres" user cannot reach.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { canTraverse, postgresDataDir, postgresIds, STATE_ROOT, stageDirectory } from "./postgres-placement.js";
import { testCleanups } from "./test-support.js";

const PLACEMENT_TS = fileURLToPath(new URL("./postgres-placement.ts", import.meta.url));
const { tempDir } = testCleanups("redline-placement-");
const asRoot = process.getuid?.() === 0;

/** A small distribution-like tree: an executable, a private file, two hard links, a symlink. */
function sourceTree(root: string): string {
  const src = join(root, "native");
  mkdirSync(join(src, "bin"), { recursive: true });
  mkdirSync(join(src, "lib"));
  writeFileSync(join(src, "bin", "postgres"), "#!/bin/sh\n", { mode: 0o700 });
  writeFileSync(join(src, "lib", "libicudata.so.60.2"), "x".repeat(100_000), { mode: 0o600 });
  linkSync(join(src, "lib", "libicudata.so.60.2"), join(src, "lib", "libicudata.so.60"));
  symlinkSync("libicudata.so.60.2", join(src, "lib", "libicudata.so"));
  return src;
}

/** Runs stageDirectory(src, dest) in `count` node processes released at the same moment. */
async function stageConcurrently(dir: string, src: string, dest: string, count: number): Promise<string[]> {
  const go = join(dir, "go");
  const script = join(dir, "stager.mts");
  writeFileSync(
    script,
    `import { existsSync } from "node:fs";
import { stageDirectory } from ${JSON.stringify(PLACEMENT_TS)};
while (!existsSync(${JSON.stringify(go)})) await new Promise((r) => setTimeout(r, 5));
console.log(stageDirectory(${JSON.stringify(src)}, ${JSON.stringify(dest)}));
`,
  );
  const children: ChildProcess[] = Array.from({ length: count }, () =>
    spawn(process.execPath, ["--import", "tsx", script], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      stdio: ["ignore", "pipe", "pipe"],
    }),
  );
  const outputs = children.map(
    (child) =>
      new Promise<string>((resolve, reject) => {
        let out = "";
        let err = "";
        child.stdout?.on("data", (d: Buffer) => {
          out += d.toString();
        });
        child.stderr?.on("data", (d: Buffer) => {
          err += d.toString();
        });
        child.once("exit", (code) =>
          code === 0 ? resolve(out.trim()) : reject(new Error(`stager exited ${code}: ${err}`)),
        );
      }),
  );
  // Let every child reach its wait loop (tsx takes a while to load) before releasing them.
  await new Promise((r) => setTimeout(r, 3_000));
  writeFileSync(go, "");
  return Promise.all(outputs);
}

describe("stageDirectory", () => {
  it("gives concurrent stagers one complete copy, readable by all, hard links kept, no temp dirs left", async () => {
    const dir = tempDir();
    const src = sourceTree(dir);
    const dest = join(dir, "stage", "postgres-1.2.3-linux-x64");
    // The half copy of a stager that died (its pid is gone) is reaped.
    const dead = spawnSync("true").pid as number;
    mkdirSync(join(dir, "stage"));
    mkdirSync(`${dest}.tmp-${dead}-0badc0de`);

    const results = await stageConcurrently(dir, src, dest, 4);
    expect(results).toEqual([dest, dest, dest, dest]);
    expect(readdirSync(dirname(dest))).toEqual(["postgres-1.2.3-linux-x64"]);
    expect(statSync(join(dirname(dest))).mode & 0o777).toBe(0o755);

    const mode = (path: string) => lstatSync(path).mode & 0o777;
    expect(mode(dest)).toBe(0o755);
    expect(mode(join(dest, "bin"))).toBe(0o755);
    expect(mode(join(dest, "bin", "postgres"))).toBe(0o755);
    expect(mode(join(dest, "lib", "libicudata.so.60.2"))).toBe(0o644);
    expect(readFileSync(join(dest, "lib", "libicudata.so.60"), "utf8")).toBe("x".repeat(100_000));
    expect(statSync(join(dest, "lib", "libicudata.so.60")).ino).toBe(
      statSync(join(dest, "lib", "libicudata.so.60.2")).ino,
    );
    expect(readlinkSync(join(dest, "lib", "libicudata.so"))).toBe("libicudata.so.60.2");

    // Staged once: a later call returns the existing copy untouched.
    const before = statSync(join(dest, "bin", "postgres")).ino;
    expect(stageDirectory(src, dest)).toBe(dest);
    expect(statSync(join(dest, "bin", "postgres")).ino).toBe(before);
  }, 60_000);
});

describe.runIf(asRoot)("postgresDataDir (as root)", () => {
  it("keeps a data dir the postgres user can reach, relocates one under a 0700 dir by a stable key", () => {
    const ids = postgresIds();
    if (!ids) throw new Error("root without postgres ids");
    const open = tempDir(0o755);
    const closed = tempDir(0o700);
    const other = tempDir(0o700);
    expect(canTraverse(open, ids)).toBe(true);
    expect(canTraverse(closed, ids)).toBe(false);

    expect(postgresDataDir(join(open, "data", "postgres"))).toBe(join(open, "data", "postgres"));
    const relocated = postgresDataDir(join(closed, "data", "postgres"));
    expect(relocated).toMatch(new RegExp(`^${STATE_ROOT}/postgres/[0-9a-f]{16}/data$`));
    expect(postgresDataDir(join(closed, "data", "..", "data", "postgres"))).toBe(relocated);
    expect(postgresDataDir(join(other, "data", "postgres"))).not.toBe(relocated);

    // A symlinked path to the same data dir finds the same cluster.
    const link = join(tempDir(0o755), "link");
    symlinkSync(closed, link);
    expect(postgresDataDir(join(link, "data", "postgres"))).toBe(relocated);
    chmodSync(closed, 0o755);
    expect(postgresDataDir(join(closed, "data", "postgres"))).toBe(join(closed, "data", "postgres"));
  });
});
