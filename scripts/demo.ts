// `pnpm demo [FILE] [INSTRUCTION...]`: the main job, on the `redline` CLI. Starts the stack when
// it is not running, creates an API key, and runs `redline edit` once per instruction on FILE
// (default: the sample contract): the first writes <name>.redline.<ext> next to FILE in FILE's
// own format (.pdf/.rtf → .docx), the rest edit that file in place in the same session. Prints
// each reply, the chunk diffs and the usage.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { basename, extname, join, resolve } from "node:path";
import { accountsV1 } from "@redline/grpc-stubs";
import { findRunningStack, startStack } from "@redline/local-stack";
import { createRpcClient, DEFAULT_ADDRS } from "@redline/service-kit";

const REPO = resolve(import.meta.dirname, "..");
const DATA_DIR = process.env.REDLINE_DATA_DIR ?? join(REPO, ".redline");
const SAMPLE = join(REPO, "samples", "contract.html");
const CLI = join(REPO, "packages", "cli", "bin", "redline.mjs");
const SAMPLE_INSTRUCTIONS = [
  'replace "Acme Corporation" with "Globex Inc"',
  'add row "Support retainer | 31 December 2027 | 12,000" to table 1',
  'add paragraph "Either party may terminate for material breach on thirty (30) days\' notice." after section "4. Term and Termination"',
];

interface ChangeRecord {
  operation: string;
  chunk_id: string;
  old_html: string;
  new_html: string;
  ai_explanation: string;
}
/** What `redline edit --json` prints. */
interface EditResult {
  output: string;
  session_id: string;
  response: string;
  changes: ChangeRecord[];
  usage: { monthly_used: number; monthly_limit: number; monthly_remaining: number; ops_charged: number };
}

const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
const cut = (s: string, n = 100) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** The old and new text from a little before where they first differ, so long chunks show their change. */
function around(oldText: string, newText: string): [string, string] {
  let p = 0;
  while (p < oldText.length && p < newText.length && oldText[p] === newText[p]) p++;
  const from = Math.max(0, p - 40);
  const lead = from > 0 ? "…" : "";
  return [lead + oldText.slice(from), lead + newText.slice(from)];
}

/** Instructions the offline engine can run on any document, derived from its own content. */
function instructionsFor(html: string): string[] {
  const headings = [...html.matchAll(/<h([1-6])[^>]*>([\s\S]*?)<\/h\1>/g)]
    .map((m) => text(m[2]))
    .filter((h) => h && !h.includes('"'));
  const out: string[] = [];
  if (/<table/i.test(html)) out.push('add row "Added by Redline | reviewed" to table 1');
  if (headings[0]) out.push(`rename heading "${headings[0]}" to "${headings[0]} (reviewed)"`);
  const anchor = headings[1] ?? headings[0];
  if (anchor && anchor !== headings[0]) out.push(`add paragraph "Reviewed with Redline." after section "${anchor}"`);
  const word = /\b([A-Z][a-z]{4,})\b/.exec(text(html))?.[1];
  if (word) out.push(`make "${word}" bold`);
  out.push('replace "  " with " "');
  return out.slice(0, 3);
}

/** Where the demo writes: <name>.redline.<ext> in FILE's format (Word for .pdf and .rtf, which Redline only reads). */
function outputPath(file: string): string {
  const ext = extname(file).toLowerCase();
  const outExt = ext === ".pdf" || ext === ".rtf" ? ".docx" : ext === ".htm" ? ".html" : ext;
  return join(resolve(file, ".."), `${basename(file, extname(file))}.redline${outExt}`);
}

/** Runs `redline ARGS… --json` against the gateway; its parsed result (stderr passes through). */
function redline(args: string[], env: Record<string, string>): Promise<EditResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI, ...args, "--json"], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let stdout = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString("utf8");
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) return resolvePromise(JSON.parse(stdout) as EditResult);
      reject(new Error(`redline ${args[0]} exited ${code}`));
    });
  });
}

async function main() {
  const [fileArg, ...instructionArgs] = process.argv.slice(2);
  const file = resolve(fileArg ?? SAMPLE);
  if (!existsSync(file)) throw new Error(`no such file: ${file}`);

  let stack = await findRunningStack(DATA_DIR);
  let stop: (() => Promise<void>) | undefined;
  if (!stack) {
    console.log("Starting Redline (embedded Postgres, NATS and S3, six services)…");
    const started = await startStack({ dataDir: DATA_DIR, env: process.env, foreground: false });
    stop = started.stop;
    stack = await findRunningStack(DATA_DIR);
    if (!stack) stack = { gatewayUrl: started.gatewayUrl } as NonNullable<typeof stack>;
  }
  const gatewayUrl = stack.gatewayUrl;
  const billingAddr =
    (stack as { addrs?: { billing?: string } }).addrs?.billing ?? process.env.BILLING_ADDR ?? DEFAULT_ADDRS.billing;
  const accounts = createRpcClient(accountsV1.AccountsServiceService, billingAddr);
  try {
    const { apiKey } = await accounts.createApiKey({ user: "demo", organization: "", plan: "" });
    console.log(`Gateway ${gatewayUrl}, API key ${apiKey.slice(0, 7)}…\n`);
    const env = { REDLINE_API_URL: gatewayUrl, REDLINE_API_KEY: apiKey };

    let instructions = instructionArgs.length > 0 ? instructionArgs : file === SAMPLE ? SAMPLE_INSTRUCTIONS : [];
    if (instructions.length === 0) {
      // Instructions that fit this document, picked from its HTML (converted only: nothing stored).
      const html = await convert(gatewayUrl, apiKey, file);
      instructions = instructionsFor(html);
      console.log(`Loaded ${basename(file)} (${html.length.toLocaleString()} bytes of HTML).\n`);
    }
    const out = outputPath(file);
    let sessionId: string | undefined;
    for (const [i, message] of instructions.entries()) {
      const args = sessionId
        ? ["edit", out, "-p", message, "--session", sessionId]
        : ["edit", file, "-p", message, "-o", out];
      const result = await redline(args, env);
      sessionId = result.session_id;
      console.log(`> ${message}`);
      console.log(`  ${result.response.split("\n").join("\n  ")}`);
      for (const d of result.changes) {
        console.log(`  [${d.operation} ${d.chunk_id}] ${d.ai_explanation}`);
        const [before, after] = around(text(d.old_html ?? ""), text(d.new_html ?? ""));
        if (d.old_html) console.log(`    - ${cut(before)}`);
        if (d.new_html) console.log(`    + ${cut(after)}`);
      }
      const u = result.usage;
      console.log(
        `  usage: ${u.ops_charged} op charged, ${u.monthly_used}/${u.monthly_limit} used, ${u.monthly_remaining} left${i < instructions.length - 1 ? "\n" : ""}`,
      );
    }
    const kind = { ".html": "HTML", ".docx": "Word file", ".md": "Markdown", ".txt": "text" }[extname(out)] ?? "file";
    console.log(`\nSession ${sessionId}. Final ${kind} written to ${out}`);
  } finally {
    accounts.close();
    if (stop) await stop();
  }
}

/** The file's HTML as the gateway converts it (POST /v1/documents/upload-base64 without a session). */
async function convert(gatewayUrl: string, apiKey: string, file: string): Promise<string> {
  const ext = extname(file).toLowerCase();
  if (ext === ".html" || ext === ".htm") return readFileSync(file, "utf8");
  const res = await fetch(`${gatewayUrl}/v1/documents/upload-base64`, {
    method: "POST",
    headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
    body: JSON.stringify({
      filename: basename(file),
      file_base64: readFileSync(file).toString("base64"),
      return_html: true,
    }),
  });
  const json = (await res.json()) as { html?: string; detail?: unknown };
  if (!res.ok) throw new Error(`POST /v1/documents/upload-base64 → ${res.status}: ${JSON.stringify(json.detail)}`);
  return json.html ?? "";
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
