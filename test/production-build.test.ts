// The production build: every package compiled (`pnpm build` minus codegen, which `pnpm test` has
// just run and which would pull the stubs from under test files running in parallel), then the six
// services started from their dist/main.js with plain node (no tsx, no source condition) and the
// main job done through them: the sample contract edited through POST /v1/chat, as `pnpm demo`
// does, and a markdown upload converted by ingest's worker process, which runs from dist too.
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { accountsV1 } from "@redline/grpc-stubs";
import { createTestDatabase, infraEnv, parentPid, processArgs } from "@redline/local-infra";
import { freeStackEnv, type RunningStack, readStackFile, SERVICE_NAMES, startStack } from "@redline/local-stack";
import { createRpcClient, type RpcClient } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { REPO_ROOT, sampleContract } from "./support/fixtures.js";

interface ChatBody {
  session_id: string;
  document_changes?: { updated_html?: string; chunk_diffs: { operation: string }[] };
}

const infra = inject("infra");
const dataDir = mkdtempSync(join(os.tmpdir(), "redline-prodbuild-"));
chmodSync(dataDir, 0o755);
let stack: RunningStack | undefined;
let accounts: RpcClient<typeof accountsV1.AccountsServiceService> | undefined;
const stackLog: string[] = [];

beforeAll(async () => {
  execFileSync(join(REPO_ROOT, "node_modules", ".bin", "tsc"), ["-b", "tsconfig.build.json"], {
    cwd: REPO_ROOT,
    stdio: "pipe",
  });
  const databaseUrl = await createTestDatabase(infra.databaseUrl, "production_build");
  stack = await startStack({
    dataDir,
    runtime: "dist",
    // process.env carries vitest's NODE_OPTIONS source condition: the launcher must drop it.
    env: {
      ...process.env,
      ...infraEnv({ ...infra, databaseUrl }),
      ...(await freeStackEnv()),
      LOG_LEVEL: "warn",
      OPENAI_BASE_URL: "",
      OPENAI_API_KEY: "",
    },
    log: (line) => stackLog.push(line),
    healthTimeoutMs: 120_000,
  }).catch((err: Error) => {
    throw new Error(`${err.message}\n${stackLog.slice(-40).join("\n")}`);
  });
  accounts = createRpcClient(accountsV1.AccountsServiceService, stack.addrs.billing);
}, 600_000);

afterAll(async () => {
  accounts?.close();
  await stack?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** POST /v1/chat with a fresh key's bearer. */
async function chat(key: string, body: Record<string, unknown>): Promise<{ status: number; body: ChatBody }> {
  const res = await fetch(`${stack?.gatewayUrl}/v1/chat`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as ChatBody };
}

/** Pids whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((p) => parentPid(p) === pid);
}

describe("the production build", () => {
  it("runs each service as plain node on its dist/main.js, without the source condition", () => {
    const children = readStackFile(dataDir)?.children ?? {};
    for (const name of SERVICE_NAMES) {
      const pid = children[name]?.pid;
      expect(pid, name).toBeDefined();
      const args = processArgs(pid as number) ?? [];
      expect(args.slice(1), name).toEqual([join(REPO_ROOT, "services", name, "dist", "main.js")]);
      const environ = readFileSync(`/proc/${pid}/environ`, "utf8");
      expect(environ, name).not.toContain("@redline/source");
    }
  });

  it("does the main job: the sample contract edited through POST /v1/chat", async () => {
    const { apiKey } = await (accounts as RpcClient<typeof accountsV1.AccountsServiceService>).createApiKey({
      user: "prodbuild",
      organization: "",
      plan: "",
    });
    const res = await chat(apiKey, {
      message: 'replace "Acme Corporation" with "Globex Inc"',
      document_html: sampleContract(),
    });
    expect(res.status).toBe(200);
    const html = res.body.document_changes?.updated_html ?? "";
    expect(html).toContain("Globex Inc");
    expect(html).not.toContain("Acme Corporation");
    expect(res.body.document_changes?.chunk_diffs.some((d) => d.operation === "edit")).toBe(true);

    // A follow-up turn in the same session: the stored document is read back and edited again.
    const next = await chat(apiKey, {
      session_id: res.body.session_id,
      message: 'add row "Support retainer | 31 December 2027 | 12,000" to table 1',
    });
    expect(next.status).toBe(200);
    expect(next.body.document_changes?.updated_html).toContain("Support retainer");
  });

  it("converts an upload in ingest's worker process, forked from dist/sandbox/worker-main.js", async () => {
    const { apiKey } = await (accounts as RpcClient<typeof accountsV1.AccountsServiceService>).createApiKey({
      user: "prodbuild-upload",
      organization: "",
      plan: "",
    });
    const markdown = "# Notes\n\nThe alpha release ships **soon**.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n";
    const res = await chat(apiKey, {
      message: 'replace "alpha" with "omega"',
      upload_document_base64: { filename: "notes.md", file_base64: Buffer.from(markdown).toString("base64") },
    });
    expect(res.status).toBe(200);
    const html = res.body.document_changes?.updated_html ?? "";
    expect(html).toContain("omega");
    expect(html).toContain("<table");

    const ingestPid = readStackFile(dataDir)?.children.ingest?.pid as number;
    const workers = childrenOf(ingestPid).map((pid) => processArgs(pid) ?? []);
    expect(workers.length).toBeGreaterThan(0);
    for (const args of workers) {
      expect(args.at(-1)).toBe(join(REPO_ROOT, "services", "ingest", "dist", "sandbox", "worker-main.js"));
      expect(args.join(" ")).not.toMatch(/tsx|@redline\/source/);
    }
  });
});
