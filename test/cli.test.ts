// The `redline` CLI (issue #34 part 2) as a user runs it: packages/cli/bin/redline.mjs spawned as
// a child process against a real stack's gateway, with REDLINE_API_KEY and its own
// XDG_CONFIG_HOME. Edits use the offline engine's literal instructions (docs/offline-engine.md),
// so every change is known: a corpus .docx comes back with only the edited paragraph changed, a
// .md byte-stable outside the edit, --dry-run leaves the file, --review takes its answers from
// stdin, and the exit codes, login, Ctrl-C and the version commands behave as `redline --help` says.
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readCorpus } from "./fixtures/corpus.js";
import { bodyBlocks, packageParts } from "./support/docx-parts.js";
import { startScriptedStackWithKey, startStackWithKey } from "./support/file-stack.js";
import { REPO_ROOT, sampleContract } from "./support/fixtures.js";
import { ADD_SECTION, getJob } from "./support/jobs.js";
import { delayed } from "./support/scripted-openai.js";
import type { TestStack } from "./support/stack.js";

const BIN = join(REPO_ROOT, "packages", "cli", "bin", "redline.mjs");

let stack: TestStack;
let key: string;
let dir: string;

beforeAll(async () => {
  ({ stack, key } = await startStackWithKey({ name: "cli" }, "carla"));
  dir = await mkdtemp(join(tmpdir(), "redline-cli-"));
});
afterAll(async () => {
  await stack?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Spawns the CLI; `env` adds to (or, with undefined, removes from) the test's environment. */
function start(
  args: string[],
  opts: { env?: Record<string, string | undefined>; input?: string; on?: { stack: TestStack; key: string } } = {},
) {
  const env: Record<string, string | undefined> = {
    ...process.env,
    REDLINE_API_URL: (opts.on?.stack ?? stack).url,
    REDLINE_API_KEY: opts.on?.key ?? key,
    XDG_CONFIG_HOME: join(dir, "config"),
    ...opts.env,
  };
  for (const name of Object.keys(env)) if (env[name] === undefined) delete env[name];
  const child = spawn(process.execPath, [BIN, ...args], { cwd: dir, env, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString("utf8");
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString("utf8");
  });
  if (opts.input !== undefined) child.stdin?.end(opts.input);
  const done = new Promise<CliRun>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done, stderr: () => stderr };
}

function cli(args: string[], opts: { env?: Record<string, string | undefined>; input?: string } = {}) {
  return start(args, { input: "", ...opts }).done;
}

/** Resolves once the child's stderr matches `pattern` (the match), or rejects after `timeoutMs`. */
async function stderrMatch(
  run: ReturnType<typeof start>,
  pattern: RegExp,
  timeoutMs = 20_000,
): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const m = pattern.exec(run.stderr());
    if (m) return m;
    if (Date.now() > deadline) throw new Error(`stderr never matched ${pattern}: ${run.stderr()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const texts = (xml: string) => [...xml.matchAll(/<w:t\b[^>]*>([^<]*)<\/w:t>/g)].map((m) => m[1]).join(" ");

const DOCX = "tika-testWORD_various.docx";

describe("redline edit", () => {
  let documentId: string;
  let original: Buffer;

  it("writes a .docx back in place: only the edited paragraph of word/document.xml differs", async () => {
    original = readCorpus(`docx/${DOCX}`);
    const file = join(dir, DOCX);
    await writeFile(file, original);
    // A word of one plain paragraph only, found in the converted HTML and the package's XML.
    const converted = await stack.call("POST", "/v1/documents/upload-base64", {
      key,
      body: { filename: DOCX, file_base64: original.toString("base64"), return_html: true },
    });
    expect(converted.status).toBe(200);
    const { html } = (await converted.json()) as { html: string };
    const before = await packageParts(original);
    const blocks = bodyBlocks(before.get("word/document.xml")?.toString("utf8") ?? "");
    const blockTexts = blocks.map(texts);
    const word = [...html.matchAll(/<p\b[^>]*>([^<]*)<\/p>/g)]
      .flatMap((m) => m[1].match(/[A-Za-z]{5,}/g) ?? [])
      .find((w) => html.split(w).length === 2 && blockTexts.filter((t) => t.includes(w)).length === 1);
    expect(word).toBeTruthy();

    const run = await cli(["edit", DOCX, "-p", `replace "${word}" with "AIEDIT"`, "--json"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as { document_id: string; changes: unknown[]; output: string };
    expect(result.changes).toHaveLength(1);
    expect(result.output).toBe(DOCX);
    documentId = result.document_id;

    const after = await packageParts(await readFile(file));
    const changed = [...new Set([...before.keys(), ...after.keys()])].filter(
      (n) => !before.get(n)?.equals(after.get(n) ?? Buffer.alloc(0)),
    );
    expect(changed).toEqual(["word/document.xml"]);
    const edited = bodyBlocks(after.get("word/document.xml")?.toString("utf8") ?? "");
    expect(edited).toHaveLength(blocks.length);
    const differing = blocks.flatMap((b, i) => (b === edited[i] ? [] : [i]));
    expect(differing).toHaveLength(1);
    expect(texts(blocks[differing[0]])).toContain(word);
    expect(texts(edited[differing[0]])).toContain("AIEDIT");
  });

  it("lists, diffs and restores the document's versions, and exports it", async () => {
    expect(documentId).toBeTruthy();
    const listed = await cli(["versions", documentId, "--json"]);
    expect(listed.code).toBe(0);
    const { versions } = JSON.parse(listed.stdout) as { versions: { version_id: string; seq: number }[] };
    expect(versions.length).toBeGreaterThanOrEqual(2);
    const [head, ...older] = versions;
    const first = older[older.length - 1];

    const plain = await cli(["versions", documentId]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain(head.version_id);

    const diff = await cli(["versions", documentId, "--diff", head.version_id, "--json"]);
    expect(diff.code).toBe(0);
    const changes = (JSON.parse(diff.stdout) as { changes: { operation: string; new_html: string }[] }).changes;
    expect(changes).toHaveLength(1);
    expect(changes[0].new_html).toContain("AIEDIT");
    const against = await cli(["versions", documentId, "--diff", first.version_id, "--against", head.version_id]);
    expect(against.code).toBe(0);
    expect(against.stdout).toMatch(/^1 change from /);
    expect(against.stdout).toContain("+ ");

    const restored = await cli(["versions", documentId, "--restore", first.version_id, "--json"]);
    expect(restored.code).toBe(0);
    expect(JSON.parse(restored.stdout)).toMatchObject({ restored: true, restored_from: first.version_id });

    // Restored to the upload: the in-place export is the file as it was uploaded.
    const exported = await cli(["export", documentId, "-f", "docx", "-o", "restored.docx", "--json"]);
    expect(exported.code).toBe(0);
    expect(JSON.parse(exported.stdout)).toMatchObject({ output: "restored.docx", format: "docx" });
    expect((await readFile(join(dir, "restored.docx"))).equals(original)).toBe(true);
  });

  it("turns a .pdf into a .docx next to it, and --track-changes writes the edit as Word revisions", {
    timeout: 120_000,
  }, async () => {
    const pdf = readCorpus("pdf/tika-testPDFVarious.pdf");
    await writeFile(join(dir, "various.pdf"), pdf);
    const run = await cli(["edit", "various.pdf", "-p", 'replace "footer" with "page foot"', "--json"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ output: "various.docx", format: "docx", written: true });
    expect((await readFile(join(dir, "various.pdf"))).equals(pdf)).toBe(true);
    expect((await packageParts(await readFile(join(dir, "various.docx")))).has("word/document.xml")).toBe(true);

    await writeFile(join(dir, "tracked.docx"), readCorpus(`docx/${DOCX}`));
    const tracked = await cli(["edit", "tracked.docx", "-p", 'replace "Footnote" with "Note"', "--track-changes"]);
    expect(tracked.code).toBe(0);
    const xml =
      (await packageParts(await readFile(join(dir, "tracked.docx")))).get("word/document.xml")?.toString("utf8") ?? "";
    expect(xml).toMatch(/<w:ins [^>]*w:author="Redline AI"/);
    expect(xml).toMatch(/<w:del [^>]*w:author="Redline AI"/);
  });

  it("keeps a .md byte-stable outside the edit", async () => {
    const source = readCorpus("md/tika-testMARKDOWN.md");
    await writeFile(join(dir, "notes.md"), source);
    const run = await cli(["edit", "notes.md", "-p", 'replace "résumé" with "curriculum vitae"']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Wrote notes.md");
    const out = await readFile(join(dir, "notes.md"), "utf8");
    expect(out).toBe(source.toString("utf8").replace("résumé", "curriculum vitae"));
  });

  it("--dry-run prints a unified diff and leaves the file as it was", async () => {
    const source = "# Plan\n\nShip on Monday.\n\nReview on Friday.\n";
    const file = join(dir, "plan.md");
    await writeFile(file, source);
    const mtime = (await stat(file)).mtimeMs;
    const run = await cli(["edit", "plan.md", "-p", 'replace "Monday" with "Tuesday"', "--dry-run"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("--- plan.md\toriginal");
    expect(run.stdout).toContain("+++ plan.md\tedited");
    expect(run.stdout).toMatch(/^-Ship on Monday\.$/m);
    expect(run.stdout).toMatch(/^\+Ship on Tuesday\.$/m);
    expect(run.stdout).not.toMatch(/^[-+]Review on Friday/m);
    expect(await readFile(file, "utf8")).toBe(source);
    expect((await stat(file)).mtimeMs).toBe(mtime);
  });

  it("--review shows each proposed change and applies the approved one only (answers from stdin)", async () => {
    await writeFile(join(dir, "contract.html"), sampleContract());
    // An unknown answer is asked again; the denial carries feedback for the agent.
    const run = await cli(["edit", "contract.html", "-p", ADD_SECTION, "--review"], {
      input: "a\nmaybe\nf Say which liability\n",
    });
    expect(run.code).toBe(0);
    const [, jobId] = /job (job_[0-9a-f]+)/.exec(run.stderr) ?? [];
    expect((await getJob(stack, key, jobId)).body.metadata.feedback).toEqual(["Say which liability"]);
    // Both proposals were shown with their new text, in order, each with the question.
    const shown = [...run.stderr.matchAll(/Change (\d) of 2: create [^\n]+\n {2}\+ ([^\n]+)/g)].map((m) => m[2]);
    expect(shown.sort()).toEqual(["Liability", "Liability is capped."]);
    expect(run.stderr.match(/\[a\]pprove, \[d\]eny/g)).toHaveLength(3);
    const [approved] = [...run.stderr.matchAll(/Change 1 of 2: create [^\n]+\n {2}\+ ([^\n]+)/g)].map((m) => m[1]);
    const html = await readFile(join(dir, "contract.html"), "utf8");
    const headings = [...html.matchAll(/<h[1-6][^>]*>([^<]*)<\/h[1-6]>/g)].map((m) => m[1].trim());
    const paragraphs = [...html.matchAll(/<p[^>]*>([^<]*)<\/p>/g)].map((m) => m[1].trim());
    if (approved === "Liability") {
      expect(headings).toContain("Liability");
      expect(paragraphs).not.toContain("Liability is capped.");
    } else {
      expect(paragraphs).toContain("Liability is capped.");
      expect(headings).not.toContain("Liability");
    }
  });

  it("Ctrl-C during a job cancels it on the server and exits 130", async () => {
    await writeFile(join(dir, "cancel.html"), sampleContract());
    // The review pauses the job awaiting approval; stdin stays open, so the CLI waits at the prompt.
    const run = start(["edit", "cancel.html", "-p", ADD_SECTION, "--review"]);
    const [, jobId] = await stderrMatch(run, /job (job_[0-9a-f]+)/);
    await stderrMatch(run, /\[a\]pprove/);
    run.child.kill("SIGINT");
    const done = await run.done;
    expect(done.code).toBe(130);
    expect(done.stderr).toContain(`Cancelled job ${jobId}`);
    const job = await getJob(stack, key, jobId);
    expect(job.body.status).toBe("cancelled");
    expect(await readFile(join(dir, "cancel.html"), "utf8")).toBe(sampleContract());
  });
});

describe("exit codes and login", () => {
  // Ten runs of the CLI, each a Node start with tsx: slow on a loaded machine.
  it("exits 2 on usage errors, naming the problem", { timeout: 120_000 }, async () => {
    const cases: [string[], RegExp][] = [
      [[], /Usage:/],
      [["frobnicate"], /Unknown command "frobnicate"/],
      [["edit", "plan.md"], /needs a prompt/],
      [["edit", "missing.md", "-p", 'replace "a" with "b"'], /No such file/],
      [["edit", "plan.doc", "-p", "x"], /Cannot edit \.doc/],
      [["edit", "plan.md", "-p", "x", "--track-changes"], /--track-changes writes Word files/],
      [["export", "x", "-f", "odt"], /Unknown format "odt"/],
      [["versions", "x", "--against", "y"], /--against goes with --diff/],
      [["usage", "--bogus"], /Unknown option '--bogus'/],
    ];
    for (const [args, message] of cases) {
      const run = await cli(args);
      expect(run.code, args.join(" ")).toBe(2);
      expect(`${run.stdout}${run.stderr}`, args.join(" ")).toMatch(message);
    }
    const noKey = await cli(["usage"], { env: { REDLINE_API_KEY: undefined } });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/No API key/);
  });

  it("exits 3 when the quota is spent (429), before any file is written", async () => {
    const broke = await stack.createKey("broke", { plan: "none" });
    await writeFile(join(dir, "quota.md"), "# Quota\n\nNothing to pay with.\n");
    const run = await cli(["edit", "quota.md", "-p", 'replace "Nothing" with "No one"', "--json"], {
      env: { REDLINE_API_KEY: broke },
    });
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/API error 429 \(quota_exhausted\)/);
    expect(JSON.parse(run.stdout)).toMatchObject({ exit_code: 3 });
    expect(await readFile(join(dir, "quota.md"), "utf8")).toBe("# Quota\n\nNothing to pay with.\n");
  });

  it("exits 4 on an API error: an unknown document, an unknown key, an unreachable API", async () => {
    const unknown = await cli(["versions", "00000000-0000-4000-8000-000000000000"]);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toMatch(/API error 404/);
    const bad = await cli(["usage"], { env: { REDLINE_API_KEY: "sk_00000000000000000000000000000000" } });
    expect(bad.code).toBe(4);
    expect(bad.stderr).toMatch(/API error 401/);
    const down = await cli(["usage", "--api-url", "http://127.0.0.1:9"]);
    expect(down.code).toBe(4);
    expect(down.stderr).toMatch(/Cannot reach the Redline API/);
  });

  it("login checks the key and stores it 0600 in $XDG_CONFIG_HOME/redline/config.json", async () => {
    const config = join(dir, "login-config");
    const env = { XDG_CONFIG_HOME: config, REDLINE_API_KEY: undefined, REDLINE_API_URL: undefined };
    const refused = await cli(["login", "--key", "sk_00000000000000000000000000000000", "--api-url", stack.url], {
      env,
    });
    expect(refused.code).toBe(4);
    await expect(stat(join(config, "redline", "config.json"))).rejects.toMatchObject({ code: "ENOENT" });

    // The key typed at the prompt (here: piped in), the URL from --api-url.
    const run = await cli(["login", "--api-url", stack.url], { env, input: `${key}\n` });
    expect(run.code).toBe(0);
    const path = join(config, "redline", "config.json");
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(path, "utf8"))).toEqual({ api_key: key, api_url: stack.url });

    // Later commands use the stored key and URL; REDLINE_API_KEY overrides the stored key.
    const usage = await cli(["usage", "--json"], { env });
    expect(usage.code).toBe(0);
    expect(JSON.parse(usage.stdout)).toMatchObject({ monthly_limit: expect.any(Number) });
    const overridden = await cli(["usage"], {
      env: { ...env, REDLINE_API_KEY: "sk_00000000000000000000000000000000" },
    });
    expect(overridden.code).toBe(4);
  });
});

describe("Ctrl-C while the model is working", () => {
  it("cancels the in-progress job before exiting 130, and writes nothing", async () => {
    // A slow model (scripted, over real HTTP): the job is in_progress while the model answers.
    const {
      model,
      stack: slow,
      key: slowKey,
    } = await startScriptedStackWithKey({ name: "cli_slow" }, { requestTimeoutMs: 60_000, maxSteps: 3 }, "sam");
    try {
      model.push(delayed(20_000, { content: "too late" }));
      const source = "# Draft\n\nA first line.\n";
      await writeFile(join(dir, "slow.md"), source);
      const run = start(["edit", "slow.md", "-p", "Rewrite everything"], { on: { stack: slow, key: slowKey } });
      const [, jobId] = await stderrMatch(run, /job (job_[0-9a-f]+)/);
      while (model.requests.length === 0) await new Promise((r) => setTimeout(r, 20));
      expect((await getJob(slow, slowKey, jobId)).body.status).toBe("in_progress");
      run.child.kill("SIGINT");
      const done = await run.done;
      expect(done.code).toBe(130);
      expect(done.stderr).toContain(`Cancelled job ${jobId}`);
      expect((await getJob(slow, slowKey, jobId)).body.status).toBe("cancelled");
      expect(await readFile(join(dir, "slow.md"), "utf8")).toBe(source);
    } finally {
      await slow.close();
      await model.close();
    }
  });
});
