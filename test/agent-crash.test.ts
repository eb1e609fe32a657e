// kill -9 of the agent service mid-job: the agent runs as a real child process against the
// test stack's services, Postgres and NATS; after SIGKILL a new agent process reclaims the
// expired lease and finishes the job, which is charged once. A job whose workers died too often
// fails with a clear error instead of staying in_progress.
import { type ChildProcess, spawn } from "node:child_process";
import { RUNTIME_ARGS } from "@redline/local-stack";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startScriptedStackWithKey } from "./support/file-stack.js";
import { REPO_ROOT, sampleContract } from "./support/fixtures.js";
import { startJob, waitForJob } from "./support/jobs.js";
import { delayed, lastToolResultJson, type ScriptedOpenAi } from "./support/scripted-openai.js";
import type { TestStack } from "./support/stack.js";

let model: ScriptedOpenAi;
let stack: TestStack;
let key: string;
const children: ChildProcess[] = [];

const call = (name: string, args: unknown) => ({ name, arguments: JSON.stringify(args) });
const LEASE_MS = 2000;

beforeAll(async () => {
  // The in-process agent serves the RPCs and sweeps, but runs no jobs: the child processes do.
  ({ model, stack, key } = await startScriptedStackWithKey(
    { name: "agent_crash", jobs: { concurrency: 0, sweepMs: 300, leaseMs: LEASE_MS, maxAttempts: 3 } },
    { requestTimeoutMs: 60_000, maxSteps: 6 },
    "kim",
  ));
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await stack?.close();
  await model?.close();
});

/** Starts services/agent/src/main.ts as a child process wired to the test stack. */
function startAgentProcess(): ChildProcess {
  const infra = inject("infra");
  // From sources: workspace packages resolve to src/ under the "@redline/source" condition.
  const args = [...RUNTIME_ARGS.tsx, "services/agent/src/main.ts"];
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    stdio: ["ignore", "ignore", "pipe"],
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: stack.databaseUrl,
      NATS_URL: infra.natsUrl,
      AGENT_ADDR: "127.0.0.1:0",
      DOCUMENTS_ADDR: stack.addrs.documents,
      SESSIONS_ADDR: stack.addrs.sessions,
      BILLING_ADDR: stack.addrs.billing,
      INGEST_ADDR: stack.addrs.ingest,
      OPENAI_BASE_URL: model.url,
      OPENAI_API_KEY: "test-key",
      OPENAI_MODEL: "scripted",
      OPENAI_MAX_STEPS: "6",
      AGENT_JOB_CONCURRENCY: "1",
      AGENT_JOB_LEASE_MS: String(LEASE_MS),
      AGENT_JOB_HEARTBEAT_MS: "300",
      AGENT_JOB_POLL_MS: "200",
      LOG_LEVEL: "silent",
    },
  });
  children.push(child);
  return child;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("kill -9 of the agent service mid-job", () => {
  it("reclaims the job in a new agent process after the lease expires, completes it and charges once", async () => {
    // The first run stalls inside a model request; the second run edits and answers.
    model.push(delayed(60_000, { content: "never delivered" }));
    model.push({ toolCalls: [call("search_text", { query: "Governing Law" })] }, (req) => ({
      toolCalls: [
        call("replace_chunk", {
          chunk_id: lastToolResultJson<{ matches: { chunk_id: string }[] }>(req).matches[0].chunk_id,
          html: "<h2>5. Governing Law and Venue</h2>",
          explanation: "Add venue",
        }),
      ],
    }));
    model.push({ content: "Added the venue." });
    const before = model.requests.length;

    const first = startAgentProcess();
    const created = await startJob(stack, key, { message: "Mention the venue", document_html: sampleContract() });
    expect(created.status).toBe(202);
    await until("the child to call the model", async () => (model.requests.length > before ? true : undefined));
    const claimed = await stack.agentDb("agent.jobs").where({ id: created.body.job_id }).first();
    expect(claimed.status).toBe("in_progress");
    expect(claimed.attempts).toBe(1);

    first.kill("SIGKILL");
    await until("the child to die", async () =>
      first.exitCode !== null || first.signalCode !== null ? true : undefined,
    );
    startAgentProcess();

    const done = await waitForJob(stack, key, created.body.job_id, ["completed", "failed"], 40_000);
    expect(done.status).toBe("completed");
    expect(done.result?.response).toBe("Added the venue.");
    expect(done.result?.document_changes?.chunk_diffs).toHaveLength(1);
    const row = await stack.agentDb("agent.jobs").where({ id: created.body.job_id }).first();
    expect(row.attempts).toBe(2);
    // One reservation per job, settled once: one operation, whichever process finished it.
    expect(done.result?.usage.monthly_used).toBe(1);
    expect(done.result?.usage.ops_charged).toBe(1);
  });

  it("cancels a job running in another agent process: stop_state accepted, then cancelled", async () => {
    model.push(delayed(60_000, { content: "never delivered" }));
    const before = model.requests.length;
    const created = await startJob(stack, key, { message: "Slow one", document_html: sampleContract() });
    await until("the child to call the model", async () => (model.requests.length > before ? true : undefined));
    const res = await stack.call("POST", `/v1/jobs/${created.body.job_id}/cancel`, { key });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: "in_progress", stop_state: "accepted" });
    const job = await waitForJob(stack, key, created.body.job_id, ["cancelled", "completed", "failed"], 10_000);
    expect(job.status).toBe("cancelled");
  });

  it("fails a job whose workers died too often with a clear error, and releases its charge", async () => {
    const created = await startJob(stack, key, { message: "please write me a poem", session_id: "crash-two" });
    // The state a job is left in when its worker was killed on its last allowed attempt.
    await stack
      .agentDb("agent.jobs")
      .where({ id: created.body.job_id })
      .update({
        status: "in_progress",
        lease_owner: "agent-dead/0",
        lease_expires_at: stack.agentDb.raw("now() - interval '1 second'"),
        attempts: 3,
      });
    const failed = await waitForJob(stack, key, created.body.job_id, ["failed", "completed"], 10_000);
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatch(/worker running it was lost 3 times/);
    expect(failed).not.toHaveProperty("result");
  });
});
