// The codebase's shape, checked (issue #31, "Proof"): each service's internals are its own (no
// relative import from one service's src/ into another's, and scripts/ and test/ reach a service
// only through its src/index.ts); no import cycle anywhere in services/ and packages/ (found by
// dependency-cruiser, which resolves our `.js` specifiers to the `.ts` sources as tsc does); no
// hand-written source file over 700 lines; and a README that is a front door, under 200 lines,
// holding both set-up commands .ci/run and a fresh machine rely on.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { cruise } from "dependency-cruiser";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");
/** Generated or vendored trees: not ours to shape. */
const SKIPPED = new Set(["node_modules", "dist", "gen", ".redline"]);
const MAX_LINES = 700;

/** Every .ts file under `dir` (relative to ROOT), generated trees left out. */
function sources(dir: string): string[] {
  const out: string[] = [];
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      if (SKIPPED.has(name)) continue;
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.(ts|mts)$/.test(name) && !name.endsWith(".d.ts")) out.push(relative(ROOT, path));
    }
  };
  walk(join(ROOT, dir));
  return out;
}

/** The relative import specifiers of a file (static imports, re-exports and dynamic imports). */
function relativeImports(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  const specs = [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)["'](\.{1,2}\/[^"']+)["']/g)].map((m) => m[1]);
  return specs.map((s) =>
    relative(ROOT, resolve(ROOT, dirname(file), s))
      .split(sep)
      .join("/"),
  );
}

/** `services/<name>/src/...` of a repo-relative path, or null. */
function serviceOf(path: string): { service: string; rest: string } | null {
  const m = /^services\/([^/]+)\/src\/(.*)$/.exec(path);
  return m ? { service: m[1], rest: m[2] } : null;
}

const isIndex = (rest: string) => /^index\.(js|ts)$/.test(rest);

describe("service boundaries", () => {
  it("no relative import leaves one service's src/ for another service's", () => {
    const crossings = sources("services").flatMap((file) => {
      const from = serviceOf(file);
      return relativeImports(file)
        .filter((target) => {
          const to = serviceOf(target);
          return from && to && to.service !== from.service;
        })
        .map((target) => `${file} → ${target}`);
    });
    expect(crossings).toEqual([]);
  });

  it("scripts/ and test/ reach a service only through its src/index.ts", () => {
    const reaches = [...sources("scripts"), ...sources("test")].flatMap((file) =>
      relativeImports(file)
        .filter((target) => {
          const to = serviceOf(target);
          return to && !isIndex(to.rest);
        })
        .map((target) => `${file} → ${target}`),
    );
    expect(reaches).toEqual([]);
  });
});

describe("import cycles", () => {
  it("has none in services/ and packages/", async () => {
    const result = await cruise(["services", "packages"], {
      baseDir: ROOT,
      tsConfig: { fileName: join(ROOT, "tsconfig.json") },
      tsPreCompilationDeps: true,
      doNotFollow: { path: "node_modules" },
      exclude: { path: "(^|/)(node_modules|dist|gen)/" },
      ruleSet: { forbidden: [{ name: "no-circular", severity: "error", from: {}, to: { circular: true } }] },
      validate: true,
    });
    const output = typeof result.output === "string" ? JSON.parse(result.output) : result.output;
    const cycles = (output.summary.violations as { from: string; to: string; cycle?: { name: string }[] }[]).map((v) =>
      [v.from, ...(v.cycle ?? []).map((c) => c.name)].join(" → "),
    );
    expect(cycles).toEqual([]);
  }, 120_000);
});

describe("file size", () => {
  it(`keeps every hand-written source file in services/ and packages/ within ${MAX_LINES} lines`, () => {
    const long = [...sources("services"), ...sources("packages")]
      .map((file) => ({ file, lines: readFileSync(join(ROOT, file), "utf8").split("\n").length }))
      .filter((f) => f.lines > MAX_LINES)
      .map((f) => `${f.file}: ${f.lines}`);
    expect(long).toEqual([]);
  });
});

describe("README", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");

  it("is a front door under 200 lines that links the architecture", () => {
    expect(readme.split("\n").length).toBeLessThan(200);
    expect(readme).toContain("docs/ARCHITECTURE.md");
  });

  it("holds the two set-up commands: the main job, and every test as .ci/run runs it", () => {
    const commands = [...readme.matchAll(/```sh\n([^`]*?)\n```/g)].map((m) => m[1].trim());
    expect(commands).toContain("bash scripts/setup.sh && pnpm demo");
    expect(commands).toContain("bash scripts/setup.sh && pnpm test");
    expect(readFileSync(join(ROOT, ".ci/run"), "utf8")).toContain("bash scripts/setup.sh && pnpm test");
  });
});
