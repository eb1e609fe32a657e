// `pnpm demo [FILE] [INSTRUCTION...]`: the main job. Starts the stack when it is not running,
// creates an API key, loads FILE (default: the sample contract) through POST /v1/chat with the
// first instruction, runs the rest as follow-up turns, prints each reply, the chunk diffs and
// the usage, and writes the final HTML next to FILE as <name>.redline.html.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename, extname, join, resolve } from "node:path";
import { accountsV1 } from "@redline/grpc-stubs";
import { findRunningStack, startStack } from "@redline/local-stack";
import { createRpcClient, DEFAULT_ADDRS } from "@redline/service-kit";

const REPO = resolve(import.meta.dirname, "..");
const DATA_DIR = process.env.REDLINE_DATA_DIR ?? join(REPO, ".redline");
const SAMPLE = join(REPO, "samples", "contract.html");
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
interface ChatResult {
  response: string;
  session_id: string;
  document_changes?: { updated_html?: string; version_id: string; chunk_diffs: ChangeRecord[] };
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

    const bytes = readFileSync(file);
    const ext = extname(file).toLowerCase();
    const load =
      ext === ".html" || ext === ".htm"
        ? { document_html: bytes.toString("utf8") }
        : { upload_document_base64: { filename: basename(file), file_base64: bytes.toString("base64") } };

    let instructions = instructionArgs.length > 0 ? instructionArgs : file === SAMPLE ? SAMPLE_INSTRUCTIONS : [];
    let sessionId: string | undefined;
    let html = "";
    const post = async (body: Record<string, unknown>): Promise<ChatResult> => {
      const res = await fetch(`${gatewayUrl}/v1/chat`, {
        method: "POST",
        headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
      const json = (await res.json()) as ChatResult & { detail?: unknown };
      if (!res.ok) throw new Error(`POST /v1/chat → ${res.status}: ${JSON.stringify(json.detail)}`);
      return json;
    };
    if (instructions.length === 0) {
      // Load first with a read-only instruction, then pick instructions that fit this document.
      const first = await post({ message: 'show section ""', ...load });
      sessionId = first.session_id;
      html = first.document_changes?.updated_html ?? "";
      instructions = instructionsFor(html);
      console.log(`Loaded ${basename(file)} (${html.length.toLocaleString()} bytes of HTML).\n`);
    }
    for (const [i, message] of instructions.entries()) {
      const result = await post({ message, ...(sessionId ? { session_id: sessionId } : load) });
      sessionId = result.session_id;
      html = result.document_changes?.updated_html ?? html;
      console.log(`> ${message}`);
      console.log(`  ${result.response.split("\n").join("\n  ")}`);
      for (const d of result.document_changes?.chunk_diffs ?? []) {
        console.log(`  [${d.operation} ${d.chunk_id}] ${d.ai_explanation}`);
        const [before, after] = around(text(d.old_html), text(d.new_html));
        if (d.old_html) console.log(`    - ${cut(before)}`);
        if (d.new_html) console.log(`    + ${cut(after)}`);
      }
      const u = result.usage;
      console.log(
        `  usage: ${u.ops_charged} op charged, ${u.monthly_used}/${u.monthly_limit} used, ${u.monthly_remaining} left${i < instructions.length - 1 ? "\n" : ""}`,
      );
    }
    const out = join(resolve(file, ".."), `${basename(file, extname(file))}.redline.html`);
    writeFileSync(out, `<!doctype html>\n<meta charset="utf-8">\n${html}\n`);
    console.log(`\nSession ${sessionId}. Final HTML written to ${out}`);
  } finally {
    accounts.close();
    if (stop) await stop();
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
