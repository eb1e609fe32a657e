// The small rows of issue #36 (part 5), each to interface-spec.md or unshown-parts.md: document
// detail's version_id only with include_html, X-Usage-* on the takeover and verification 429s,
// the pre-signed upload's curl_example (run for real), parse_mode, the revert's
// document_state.attachments, and metadata.continue_prompt of a long edit paused at its step limit.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { DEFAULT_AGENT_SIGNUPS_PER_HOUR } from "@redline/billing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { jsonCall } from "./support/documents-client.js";
import { sampleContract } from "./support/fixtures.js";
import { startJob, waitForJob } from "./support/jobs.js";
import { type ScriptedOpenAi, scriptedEngine, startScriptedOpenAi } from "./support/scripted-openai.js";
import { startTestStack, type TestStack } from "./support/stack.js";

const run = promisify(execFile);

let stack: TestStack;
let key: string;
let model: ScriptedOpenAi;
let scripted: TestStack;
let scriptedKey: string;

beforeAll(async () => {
  model = await startScriptedOpenAi();
  [stack, scripted] = await Promise.all([
    startTestStack(inject("infra"), { name: "small_rows" }),
    startTestStack(inject("infra"), {
      name: "small_rows_model",
      openai: scriptedEngine(model, { requestTimeoutMs: 60_000, maxSteps: 3 }),
      jobs: { concurrency: 1, heartbeatMs: 200, leaseMs: 3000, pollMs: 200 },
    }),
  ]);
  [key, scriptedKey] = await Promise.all([stack.createKey("sam"), scripted.createKey("sam")]);
});
afterAll(async () => {
  await Promise.all([stack?.close(), scripted?.close()]);
  await model?.close();
});

type Body = Record<string, unknown>;

async function chat(k: string, body: Body, s = stack) {
  const res = await jsonCall(s, "POST", "/v1/chat", k, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { session_id: string; document_changes?: { document_id: string; version_id: string } };
}

/** The X-Usage-* headers of a response, as numbers (NaN when absent). */
function usageOf(res: Response) {
  return {
    limit: Number(res.headers.get("x-usage-limit") ?? Number.NaN),
    used: Number(res.headers.get("x-usage-used") ?? Number.NaN),
    remaining: Number(res.headers.get("x-usage-remaining") ?? Number.NaN),
  };
}

describe("GET /v1/documents/{id}", () => {
  it("sends version_id only with include_html=true, with html and page_setup", async () => {
    const turn = await chat(key, {
      message: 'replace "Acme Corporation" with "Globex Inc"',
      document_html: sampleContract(),
    });
    const documentId = turn.document_changes?.document_id ?? "";
    const bare = await jsonCall(stack, "GET", `/v1/documents/${documentId}`, key);
    expect(bare.status).toBe(200);
    expect(bare.body.structure.block_count).toBeGreaterThan(0);
    for (const field of ["version_id", "html", "page_setup"]) expect(bare.body).not.toHaveProperty(field);

    const full = await jsonCall(stack, "GET", `/v1/documents/${documentId}?include_html=true`, key);
    expect(full.status).toBe(200);
    expect(full.body.version_id).toBe(turn.document_changes?.version_id);
    expect(full.body.html).toContain("Globex Inc");
    expect(full.body).toHaveProperty("page_setup");
  });
});

describe("takeover and verification 429s", () => {
  it("carry X-Usage-* with Retry-After: handoff_limit with the agent account's usage", async () => {
    const signup = await stack.call("POST", "/v1/agents/signup", { body: { name: "bot" } });
    expect(signup.status).toBe(201);
    const agent = (await signup.json()) as { api_key: string };
    // The account's usage, as GET /v1/usage reports it.
    const usage = usageOf(await stack.call("GET", "/v1/usage", { key: agent.api_key }));
    expect(usage.limit).toBe(500);
    for (let i = 0; i < 5; i++) {
      const ok = await stack.call("POST", "/v1/agents/handoff", {
        key: agent.api_key,
        body: { email: `h${i}@example.com` },
      });
      expect(ok.status, await ok.text()).toBe(201);
    }
    const refused = await stack.call("POST", "/v1/agents/handoff", {
      key: agent.api_key,
      body: { email: "late@example.com" },
    });
    const body = (await refused.json()) as Body;
    expect(refused.status, JSON.stringify(body)).toBe(429);
    expect(body.code).toBe("handoff_limit");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(usageOf(refused)).toEqual(usage);
  });

  it("signup_limit carries the X-Usage-* of the free account a sign-up makes", async () => {
    // The handoff test signed up once from this address; use up the rest of the hour's sign-ups.
    for (let i = 1; i < DEFAULT_AGENT_SIGNUPS_PER_HOUR; i++) {
      expect((await stack.call("POST", "/v1/agents/signup", { body: {} })).status).toBe(201);
    }
    const refused = await stack.call("POST", "/v1/agents/signup", { body: {} });
    const body = (await refused.json()) as Body;
    expect(refused.status, JSON.stringify(body)).toBe(429);
    expect(body.code).toBe("signup_limit");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(usageOf(refused)).toEqual({ limit: 500, used: 0, remaining: 500 });
  });

  it("verification_limit carries the caller's X-Usage-*", async () => {
    const human = await stack.createKey("vera");
    await chat(human, { message: 'replace "Acme Corporation" with "Initech"', document_html: sampleContract() });
    const usage = usageOf(await stack.call("GET", "/v1/usage", { key: human }));
    expect(usage.used).toBe(1);
    for (let i = 0; i < 5; i++) {
      const ok = await stack.call("PATCH", "/v1/users/me", { key: human, body: { email: `v${i}@example.com` } });
      expect(ok.status, await ok.text()).toBe(200);
    }
    const refused = await stack.call("PATCH", "/v1/users/me", { key: human, body: { email: "v9@example.com" } });
    const body = (await refused.json()) as Body;
    expect(refused.status, JSON.stringify(body)).toBe(429);
    expect(body.code).toBe("verification_limit");
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(usageOf(refused)).toEqual(usage);
  });
});

describe("pre-signed uploads", () => {
  it("answer a curl_example that PUTs the file, and process takes parse_mode auto only", async () => {
    const dir = await mkdtemp(join(tmpdir(), "small-rows-"));
    try {
      // A name a shell would split or expand unquoted.
      const filename = "it's $HOME & notes.md";
      const content = "# Heading\n\nUploaded with curl.\n";
      await writeFile(join(dir, filename), content);
      const created = await jsonCall(stack, "POST", "/v1/uploads", key, {
        filename,
        size_bytes: Buffer.byteLength(content),
        content_type: "text/markdown",
      });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const example = created.body.curl_example as string;
      expect(example).toContain(created.body.upload_url.split("?")[0]);
      await run("sh", ["-c", example], { cwd: dir });

      const wrong = await jsonCall(stack, "POST", `/v1/uploads/${created.body.upload_id}/process`, key, {
        parse_mode: "ocr",
      });
      expect(wrong.status).toBe(422);
      expect(wrong.body.detail).toEqual([
        expect.objectContaining({ loc: ["body", "parse_mode"], msg: "Input should be 'auto'" }),
      ]);

      const processed = await jsonCall(stack, "POST", `/v1/uploads/${created.body.upload_id}/process`, key, {
        parse_mode: "auto",
      });
      expect(processed.status, JSON.stringify(processed.body)).toBe(200);
      expect(processed.body.html).toContain("Uploaded with curl.");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("revert", () => {
  it("lists the session's attachments in document_state.attachments", async () => {
    const t0 = await chat(key, {
      message: 'replace "Acme Corporation" with "Globex Inc"',
      document_html: sampleContract(),
    });
    const sid = t0.session_id;
    const attached = await jsonCall(stack, "POST", "/v1/attachments/upload-base64", key, {
      filename: "brief.txt",
      file_base64: Buffer.from("Background notes for the agreement.").toString("base64"),
      session_id: sid,
    });
    expect(attached.status, JSON.stringify(attached.body)).toBe(200);
    await chat(key, { session_id: sid, message: 'make "thirty (30) days" italic' });

    const dry = await jsonCall(stack, "POST", `/v1/sessions/${sid}/revert`, key, { turn_index: 1, dry_run: true });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    const history = await jsonCall(stack, "GET", `/v1/sessions/${sid}/history`, key);
    expect(history.body.attachments).toHaveLength(1);
    expect(dry.body.document_state.attachments).toEqual(history.body.attachments);
    expect(dry.body.document_state.attachments[0]).toMatchObject({
      attachment_id: attached.body.job_id,
      filename: "brief.txt",
    });

    const res = await jsonCall(stack, "POST", `/v1/sessions/${sid}/revert`, key, { turn_index: 1 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.document_state.attachments.map((a: Body) => a.attachment_id)).toEqual([attached.body.job_id]);
    const redo = await jsonCall(stack, "POST", `/v1/sessions/${sid}/redo-revert`, key, {
      turn_index: 1,
      redo_checkpoint_id: res.body.redo_checkpoint_id,
    });
    expect(redo.status, JSON.stringify(redo.body)).toBe(200);
    expect(redo.body.document_state.attachments.map((a: Body) => a.attachment_id)).toEqual([attached.body.job_id]);
  });
});

describe("metadata.continue_prompt", () => {
  it("says what a long edit paused at its step limit asks and has done, and goes once answered", async () => {
    const call = (name: string, args: unknown) => ({ name, arguments: JSON.stringify(args) });
    // A first turn stores the document, so the job can name one of its chunks.
    model.push({ content: "Loaded." });
    const first = await chat(scriptedKey, { message: "Load this", document_html: sampleContract() }, scripted);
    const sid = first.session_id;
    const roster = await jsonCall(scripted, "GET", `/v1/sessions/${sid}/documents?include_html=true`, scriptedKey);
    const html = roster.body.documents[0].html as string;
    const chunkId = /data-chunk-id="([^"]+)"/.exec(html)?.[1] ?? "";
    expect(chunkId).not.toBe("");

    model.push(
      {
        toolCalls: [
          call("replace_chunk", { chunk_id: chunkId, html: "<h1>Services Agreement</h1>", explanation: "Retitle" }),
        ],
      },
      { toolCalls: [call("get_outline", {})] },
      { toolCalls: [call("get_outline", {})] },
    );
    const created = await startJob(scripted, scriptedKey, {
      message: "Retitle, then review every clause",
      session_id: sid,
    });
    const paused = await waitForJob(scripted, scriptedKey, created.body.job_id, [
      "awaiting_approval",
      "failed",
      "completed",
    ]);
    expect(paused.status).toBe("awaiting_approval");
    const metadata = paused.metadata as typeof paused.metadata & {
      continue_prompt?: { message: string; operations_applied: number; sections_changed: number };
      intermediate_responses?: { type: string; content: string }[];
    };
    expect(metadata.awaiting_kind).toBe("continue_prompt");
    // The prompt is the last stored event (as the stream carries it).
    const prompt = metadata.intermediate_responses?.at(-1);
    expect(metadata.continue_prompt).toEqual({
      message: prompt?.content,
      operations_applied: 1,
      sections_changed: expect.any(Number),
    });
    expect(metadata.continue_prompt?.message).toMatch(/\S/);
    // The compact view carries it too: a client resuming the job needs nothing else.
    const compact = await jsonCall(scripted, "GET", `/v1/jobs/${created.body.job_id}?compact=true`, scriptedKey);
    expect(compact.body.metadata.continue_prompt).toEqual(metadata.continue_prompt);

    const answered = await jsonCall(scripted, "POST", `/v1/chat/${sid}/continue`, scriptedKey, {
      job_id: created.body.job_id,
      continue: false,
    });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    const done = await waitForJob(scripted, scriptedKey, created.body.job_id, ["completed"]);
    expect(done.metadata).not.toHaveProperty("continue_prompt");
  });
});
