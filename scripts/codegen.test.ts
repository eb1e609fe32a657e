import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// scripts/codegen.mjs under concurrency: two runs at once (two `pnpm start`, a start and a test
// run) while a third process keeps importing the stubs. The tree is generated into its own
// directory under packages/grpc-stubs (so the generated imports resolve from its node_modules)
// and never touches the real src/gen that other processes use.
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const script = join(root, "scripts/codegen.mjs");
const STAMP_FILE = ".codegen-stamp.json";

let base: string;
let outDir: string;

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      return entry.isDirectory() ? listFiles(path).map((file) => join(entry.name, file)) : [entry.name];
    })
    .sort();
}

function run(command: string, args: string[]): { child: ChildProcess; done: Promise<{ code: number; out: string }> } {
  const child = spawn(command, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout?.on("data", (chunk) => {
    out += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    out += chunk;
  });
  const done = new Promise<{ code: number; out: string }>((resolve) => {
    child.on("exit", (code) => resolve({ code: code ?? -1, out }));
  });
  return { child, done };
}

function codegen(...args: string[]) {
  return run(process.execPath, [script, "--out", outDir, ...args]);
}

beforeAll(async () => {
  base = mkdtempSync(join(root, "packages/grpc-stubs/.codegen-test-"));
  outDir = join(base, "gen");
  const first = await codegen().done;
  expect(first.code, first.out).toBe(0);
}, 120_000);

afterAll(() => {
  rmSync(base, { recursive: true, force: true });
});

describe("codegen", () => {
  it("writes a complete tree with a stamp, then skips while the inputs are unchanged", async () => {
    const files = listFiles(outDir);
    expect(files).toContain("redline/agent/v1/agent.ts");
    expect(files).toContain(STAMP_FILE);
    const stamp = JSON.parse(readFileSync(join(outDir, STAMP_FILE), "utf8")) as { hash: string; files: string[] };
    expect(stamp.files).toEqual(files.filter((file) => file !== STAMP_FILE));
    const mtime = statSync(join(outDir, "redline/agent/v1/agent.ts")).mtimeMs;

    const again = await codegen().done;
    expect(again.code, again.out).toBe(0);
    expect(again.out).toMatch(/up to date/);
    expect(statSync(join(outDir, "redline/agent/v1/agent.ts")).mtimeMs).toBe(mtime);
  }, 120_000);

  it("regenerates when a stamped file is missing, and drops files no proto produces", async () => {
    rmSync(join(outDir, "redline/agent/v1/jobs.ts"));
    writeFileSync(join(outDir, "redline/agent/v1/removed_proto.ts"), "export {};\n");
    const result = await codegen().done;
    expect(result.code, result.out).toBe(0);
    expect(existsSync(join(outDir, "redline/agent/v1/jobs.ts"))).toBe(true);
    expect(existsSync(join(outDir, "redline/agent/v1/removed_proto.ts"))).toBe(false);
  }, 120_000);

  it("two runs at once never leave the tree absent or partial for a reader, nor break an importer", async () => {
    const files = listFiles(outDir).filter((file) => file.endsWith(".ts"));
    const expected = new Map(files.map((file) => [file, readFileSync(join(outDir, file), "utf8")]));
    const stopFile = join(base, "stop");
    const importerPath = join(base, "importer.mjs");
    // Imports every stub again and again (a query string defeats the module cache), as a
    // starting service does, and reports how many imports failed.
    writeFileSync(
      importerPath,
      `import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [dir, stop, ...files] = process.argv.slice(2);
let ok = 0, failed = 0, round = 0;
const errors = [];
while (!existsSync(stop)) {
  round++;
  for (const file of files) {
    try { await import(pathToFileURL(dir + "/" + file).href + "?round=" + round); ok++; }
    catch (error) { failed++; if (errors.length < 3) errors.push(String(error)); }
  }
}
console.log(JSON.stringify({ ok, failed, errors }));
`,
    );
    const importer = run(process.execPath, ["--import", "tsx", importerPath, outDir, stopFile, ...files]);

    const runs = [codegen("--force"), codegen("--force")];
    let finished = false;
    const results = Promise.all(runs.map((r) => r.done)).finally(() => {
      finished = true;
    });
    const problems: string[] = [];
    let checks = 0;
    while (!finished) {
      if (!existsSync(outDir)) problems.push("gen directory absent");
      for (const [file, text] of expected) {
        let now: string | undefined;
        try {
          now = readFileSync(join(outDir, file), "utf8");
        } catch {
          now = undefined;
        }
        if (now !== text) problems.push(`${file}: ${now === undefined ? "missing" : `partial (${now.length} chars)`}`);
      }
      checks++;
      await nextTurn();
    }
    writeFileSync(stopFile, "");
    const [one, two] = await results;
    const imported = await importer.done;

    expect(one.code, one.out).toBe(0);
    expect(two.code, two.out).toBe(0);
    expect(checks).toBeGreaterThan(10);
    expect(problems.slice(0, 5)).toEqual([]);
    expect(imported.code, imported.out).toBe(0);
    const report = JSON.parse(imported.out.trim().split("\n").at(-1) ?? "{}") as { ok: number; failed: number };
    expect(report.failed, imported.out).toBe(0);
    expect(report.ok).toBeGreaterThan(files.length);
    // Both runs cleaned their temporary trees; the stamp is back.
    expect(readdirSync(base).filter((name) => name.startsWith(".codegen-"))).toEqual([]);
    expect(existsSync(join(outDir, STAMP_FILE))).toBe(true);
  }, 180_000);
});
