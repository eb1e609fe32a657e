// SIGTERM to real service processes (services/<name>/src/main.ts) beside an in-process stack:
// an idle backend reports NOT_SERVING, stops accepting and exits 0 quickly; an agent running a
// job hands it back and another agent process takes it over at once (charged once); a gateway
// ends its open progress stream, and the client resumes on another gateway with Last-Event-ID
// without a gap or a repeat. The measured times are printed.
import { type ChildProcess, spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { healthV1 } from "@redline/grpc-stubs";
import { freePort } from "@redline/local-infra";
import { RUNTIME_ARGS } from "@redline/local-stack";
import { createRpcClient } from "@redline/service-kit";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { startScriptedStackWithKey } from "./support/file-stack.js";
import { REPO_ROOT, sampleContract } from "./support/fixtures.js";
import { readSse, type SseEvent, startJob, waitForJob } from "./support/jobs.js";
import { delayed, lastToolResultJson, type RecordedRequest, type ScriptedOpenAi } from "./support/scripted-openai.js";
import type { TestStack } from "./support/stack.js";

let model: ScriptedOpenAi;
let stack: TestStack;
let key: string;

const LEASE_MS = 10_000;
const call = (name: string, args: unknown) => ({ name, arguments: JSON.stringify(args) });
const { SERVING, NOT_SERVING } = healthV1.HealthCheckResponse_ServingStatus;

beforeAll(async () => {
  // The in-process agent serves RPCs but runs no jobs: the agent processes below do. Leases are
  // long, so only a hand-back (never an expired lease) can explain a prompt pick-up.
  ({ model, stack, key } = await startScriptedStackWithKey(
    { name: "graceful", jobs: { concurrency: 0, leaseMs: LEASE_MS } },
    { requestTimeoutMs: 60_000, maxSteps: 8 },
    "gina",
  ));
});
afterAll(async () => {
  await stack?.close();
  await model?.close();
});

/** A pino line of a service process. */
interface LogLine {
  level: number;
  msg: string;
  time: number;
  [field: string]: unknown;
}

/** A service process started from its main.ts. */
interface ServiceProcess {
  child: ChildProcess;
  lines: LogLine[];
  /** Resolves with the first line matching `match` (already printed or to come). */
  line(match: (l: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

const processes: ServiceProcess[] = [];
afterEach(() => {
  for (const p of processes.splice(0))
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
});

/** Starts services/<service>/src/main.ts wired to the test stack, logging JSON at info level. */
function startProcess(service: string, env: Record<string, string>): ServiceProcess {
  const infra = inject("infra");
  const child = spawn(process.execPath, [...RUNTIME_ARGS.tsx, `services/${service}/src/main.ts`], {
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH ?? "",
      DATABASE_URL: stack.databaseUrl,
      NATS_URL: infra.natsUrl,
      DOCUMENTS_ADDR: stack.addrs.documents,
      SESSIONS_ADDR: stack.addrs.sessions,
      BILLING_ADDR: stack.addrs.billing,
      INGEST_ADDR: stack.addrs.ingest,
      AGENT_ADDR: stack.addrs.agent,
      LOG_LEVEL: "info",
      ...env,
    },
  });
  const lines: LogLine[] = [];
  const waiters: { match: (l: LogLine) => boolean; resolve: (l: LogLine) => void }[] = [];
  let buffer = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let cut = buffer.indexOf("\n"); cut >= 0; cut = buffer.indexOf("\n")) {
      const text = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 1);
      if (!text.startsWith("{")) continue;
      const line = JSON.parse(text) as LogLine;
      lines.push(line);
      for (const w of waiters.filter((w) => w.match(line))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  const proc: ServiceProcess = {
    child,
    lines,
    exited,
    line(match, timeoutMs = 30_000) {
      const found = lines.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`${service}: no such log line in ${timeoutMs} ms; stderr: ${stderr.slice(-2000)}`)),
          timeoutMs,
        );
        waiters.push({
          match,
          resolve: (l) => {
            clearTimeout(timer);
            resolve(l);
          },
        });
        void exited.then(() => reject(new Error(`${service} exited; stderr: ${stderr.slice(-2000)}`)));
      });
    },
  };
  processes.push(proc);
  return proc;
}

/** An agent process running jobs one at a time, polling for work only every `pollMs`. */
function startAgent(pollMs: number): ServiceProcess {
  return startProcess("agent", {
    LISTEN_ADDR: "127.0.0.1:0",
    OPENAI_BASE_URL: model.url,
    OPENAI_API_KEY: "test-key",
    OPENAI_MODEL: "scripted",
    OPENAI_MAX_STEPS: "8",
    AGENT_JOB_CONCURRENCY: "1",
    AGENT_JOB_LEASE_MS: String(LEASE_MS),
    AGENT_JOB_HEARTBEAT_MS: "500",
    AGENT_JOB_POLL_MS: String(pollMs),
  });
}

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 30_000,
  everyMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await sleep(everyMs);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The first chunk id the search_text call of `req`'s conversation found. */
function searchHit(req: RecordedRequest): string {
  for (const m of req.messages) {
    if (m.role !== "tool" || typeof m.content !== "string") continue;
    const result = JSON.parse(m.content) as { matches?: { chunk_id: string }[] };
    if (result.matches?.[0]) return result.matches[0].chunk_id;
  }
  throw new Error("no search result in the conversation");
}

const jobRow = (id: string) => stack.agentDb("agent.jobs").where({ id }).first();
const eventRows = (id: string) =>
  stack.agentDb("agent.job_events").where({ job_id: id }).orderBy("sequence").select("sequence", "type");

describe("SIGTERM to an idle backend", () => {
  it("answers NOT_SERVING first, then stops accepting, and exits 0 within ~1 s", async () => {
    // LISTEN_ADDR wins over the service's own address (its callers' address, here unusable).
    const port = await freePort();
    const billing = startProcess("billing", { LISTEN_ADDR: `127.0.0.1:${port}`, BILLING_ADDR: "127.0.0.1:1" });
    const listening = await billing.line((l) => l.msg === "billing listening");
    expect(listening.address).toBe(`127.0.0.1:${port}`);
    const health = createRpcClient(healthV1.HealthService, `127.0.0.1:${port}`);
    try {
      expect((await health.check({ service: "" })).status).toBe(SERVING);
      const seen: { started: number; status: number | "unavailable" }[] = [];
      let polling = true;
      const poller = (async () => {
        while (polling) {
          const started = Date.now();
          const status = await health
            .check({ service: "" }, { timeoutMs: 500 })
            .then((r) => r.status)
            .catch(() => "unavailable" as const);
          seen.push({ started, status });
          await sleep(20);
        }
      })();
      await sleep(100);
      const sent = Date.now();
      billing.child.kill("SIGTERM");
      const exit = await billing.exited;
      polling = false;
      await poller;

      expect(exit.code).toBe(0);
      const exitMs = exit.at - sent;
      console.info(`[measured] idle billing: SIGTERM → exit 0 in ${exitMs} ms`);
      expect(exitMs).toBeLessThan(3_000);
      // Checks started once the service said it is stopping: NOT_SERVING (many, during the
      // unready second), then no server at all; never SERVING again. (From its log line, not from
      // the kill: on a loaded machine the signal may be handled tens of ms later.)
      const stoppingAt = billing.lines.find((l) => l.msg === "billing stopping: health NOT_SERVING")?.time;
      expect(stoppingAt).toBeGreaterThanOrEqual(sent);
      const after = seen.filter((s) => s.started > (stoppingAt ?? sent)).map((s) => s.status);
      expect(after[0]).toBe(NOT_SERVING);
      expect(after).not.toContain(SERVING);
      const lastNotServing = after.lastIndexOf(NOT_SERVING);
      expect(after.slice(0, lastNotServing + 1).every((s) => s === NOT_SERVING)).toBe(true);
      expect(lastNotServing).toBeGreaterThanOrEqual(5);
      // Its own account of the steps, in order (by time: the process and the service log
      // through two pino instances, whose buffered lines may reach the pipe out of order).
      const times = [
        "SIGTERM: shutting down",
        "billing stopping: health NOT_SERVING",
        "billing no longer accepts RPCs; draining 0 in flight",
        "billing stopped",
        "shut down cleanly",
      ].map((msg) => billing.lines.find((l) => l.msg === msg)?.time ?? Number.NaN);
      expect(times.every((t) => t >= sent)).toBe(true);
      expect([...times].sort((a, b) => a - b)).toEqual(times);
      // The unready second lies between NOT_SERVING and closing the listener.
      expect(times[2] - times[1]).toBeGreaterThanOrEqual(990);
    } finally {
      health.close();
    }
  });
});

describe("SIGTERM to an agent running a job", () => {
  it("hands the job back; another agent process takes it over at once and completes it, charged once", async () => {
    // The first agent's model request stalls; the second agent's run edits and answers.
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

    const first = startAgent(200);
    await first.line((l) => l.msg === "agent listening");
    const created = await startJob(stack, key, { message: "Mention the venue", document_html: sampleContract() });
    expect(created.status).toBe(202);
    const jobId = created.body.job_id;
    await until("the first agent to call the model", async () => (model.requests.length > before ? true : undefined));
    const claimed = await jobRow(jobId);
    expect(claimed).toMatchObject({ status: "in_progress", attempts: 1 });

    // The second agent polls only every 30 s: a prompt pick-up can only come from the wake.
    const second = startAgent(30_000);
    await second.line((l) => l.msg === "agent listening");
    await sleep(300);

    const sent = Date.now();
    first.child.kill("SIGTERM");
    let handedBackAt = 0;
    const taken = await until(
      "another agent to take the job",
      async () => {
        const row = await jobRow(jobId);
        if (!handedBackAt && row.status === "pending" && row.lease_owner === null) handedBackAt = Date.now();
        return row.lease_owner && row.lease_owner !== claimed.lease_owner ? { row, at: Date.now() } : undefined;
      },
      10_000,
      10,
    );
    const exit = await first.exited;
    const done = await waitForJob(stack, key, jobId, ["completed", "failed", "cancelled"], 30_000);

    const pickUpMs = taken.at - sent;
    console.info(
      `[measured] agent with a job in flight: SIGTERM → handed back ${handedBackAt ? `${handedBackAt - sent} ms` : "(not seen between polls)"}, ` +
        `taken by the other agent ${pickUpMs} ms, first agent exit ${exit.at - sent} ms (code ${exit.code})`,
    );
    expect(exit.code).toBe(0);
    expect(exit.at - sent).toBeLessThan(5_000);
    // Far below the 30 s poll of the second agent and the 10 s lease.
    expect(pickUpMs).toBeLessThan(2_000);
    expect(first.lines.some((l) => l.msg === "job handed back to the other agents" && l.jobId === jobId)).toBe(true);

    expect(done.status).toBe("completed");
    expect(done.result?.response).toBe("Added the venue.");
    expect(done.result?.document_changes?.chunk_diffs).toHaveLength(1);
    // One hold under the job's key, settled once by the agent that finished: one operation.
    expect(done.result?.usage.ops_charged).toBe(1);
    expect(done.result?.usage.monthly_used).toBe(1);
    // The handed-back run is not counted as an attempt: only the second agent's run is.
    const row = await jobRow(jobId);
    expect(row.attempts).toBe(1);
    const events = await eventRows(jobId);
    expect(events.map((e: { sequence: string }) => Number(e.sequence))).toEqual(
      events.map((_: unknown, i: number) => i + 1),
    );
    expect(events.filter((e: { type: string }) => e.type === "final")).toHaveLength(1);
    expect(events.filter((e: { type: string }) => e.type === "usage")).toHaveLength(1);

    second.child.kill("SIGTERM");
    expect((await second.exited).code).toBe(0);
  });
});

describe("SIGTERM to a gateway with an open progress stream", () => {
  it("ends the stream; resumed with Last-Event-ID on another gateway it continues with no gap or repeat", async () => {
    // Progress events spread over a few seconds: one per tool call, the later ones delayed.
    model.push(
      { toolCalls: [call("search_text", { query: "Governing Law" })] },
      delayed(1_500, { toolCalls: [call("get_outline", {})] }),
      delayed(1_000, (req) => ({
        toolCalls: [
          call("replace_chunk", {
            chunk_id: searchHit(req),
            html: "<h2>5. Governing Law and Venue</h2>",
            explanation: "Add venue",
          }),
        ],
      })),
      delayed(500, { content: "Added the venue." }),
    );
    const agent = startAgent(200);
    await agent.line((l) => l.msg === "agent listening");
    const port = await freePort();
    const gateway = startProcess("gateway", { HOST: "127.0.0.1", PORT: String(port) });
    await gateway.line((l) => l.msg === "listening");
    const replicaA = { url: `http://127.0.0.1:${port}` };

    const created = await startJob(stack, key, { message: "Mention the venue", document_html: sampleContract() });
    const jobId = created.body.job_id;
    const path = `/v1/chat/${created.body.session_id}/stream?job_id=${jobId}`;
    let sent = 0;
    let healthWhileStopping: { status: number; body: unknown } | undefined;
    const first = await readSse(replicaA, path, {
      headers: { Authorization: `Bearer ${key}` },
      timeoutMs: 30_000,
      onEvent: (e: SseEvent) => {
        if (sent || e.event !== "intermediate" || Number(e.id) < 3) return;
        sent = Date.now();
        gateway.child.kill("SIGTERM");
        // The signal lands a moment later; within the unready second /health turns 503.
        void (async () => {
          for (let i = 0; i < 40 && !healthWhileStopping; i++) {
            const res = await fetch(`${replicaA.url}/health`).catch(() => undefined);
            if (!res) return;
            if (res.status === 503) healthWhileStopping = { status: res.status, body: await res.json() };
            else await res.arrayBuffer();
            await sleep(25);
          }
        })();
      },
    });
    const endedAt = Date.now();
    expect(sent).toBeGreaterThan(0);
    expect(first.status).toBe(200);
    expect(first.ended).toBe(true);
    expect(first.events.map((e) => e.event)).not.toContain("error");
    expect(first.events.map((e) => e.event)).not.toContain("usage");
    expect(healthWhileStopping).toEqual({ status: 503, body: { status: "unhealthy", failing: ["gateway"] } });
    const exit = await gateway.exited;
    console.info(
      `[measured] gateway with an open stream: SIGTERM → stream ended ${endedAt - sent} ms, exit ${exit.at - sent} ms (code ${exit.code})`,
    );
    expect(exit.code).toBe(0);
    expect(endedAt - sent).toBeLessThan(3_000);

    // The EventSource's reconnect, landing on the other gateway.
    const lastId = first.events[first.events.length - 1].id as string;
    const rest = await readSse(stack, path, {
      headers: { Authorization: `Bearer ${key}`, "Last-Event-ID": lastId },
      timeoutMs: 30_000,
    });
    expect(rest.status).toBe(200);
    expect(rest.ended).toBe(true);
    expect(rest.events.length).toBeGreaterThan(0);
    const ids = [...first.events, ...rest.events].map((e) => Number(e.id));
    const stored = await eventRows(jobId);
    expect(ids).toEqual(stored.map((e: { sequence: string }) => Number(e.sequence)));
    expect([...first.events, ...rest.events].map((e) => e.event)).toEqual(stored.map((e: { type: string }) => e.type));
    expect(rest.events.slice(-2).map((e) => e.event)).toEqual(["final", "usage"]);

    agent.child.kill("SIGTERM");
    expect((await agent.exited).code).toBe(0);
  });
});
