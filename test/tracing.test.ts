// Traces across the stack, exported over real OTLP/HTTP to a scripted receiver: a sync chat is
// one trace from the gateway's HTTP span through every gRPC hop (a server span in documents,
// sessions, billing, agent, each a child of its caller's span; a client span only for a call
// that failed) and the outbox relay's publish; an async job run by
// ANOTHER agent process (a real child process exporting on its own) lands in the trace of the
// request that created it; a client's traceparent is continued; log lines carry the trace id.
import { type ChildProcess, spawn } from "node:child_process";
import { DOCUMENT_EVENTS_STREAM, decodeJobEvent, jobSubject } from "@redline/event-contracts";
import { startGateway } from "@redline/gateway";
import { RUNTIME_ARGS } from "@redline/local-stack";
import { connectNats, createLogger, initTracing, type Tracing } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startStackWithKey } from "./support/file-stack.js";
import { REPO_ROOT, sampleContract } from "./support/fixtures.js";
import { readSse, startJob, waitForJob } from "./support/jobs.js";
import { logLines } from "./support/log-lines.js";
import { KIND, type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "./support/otlp-receiver.js";
import type { TestStack } from "./support/stack.js";

let receiver: OtlpReceiver;
let tracing: Tracing;
let stack: TestStack;
let key: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  // This worker process is the in-process stack: one provider for all its services, as each
  // service process has in production (there, service.name tells them apart; here rpc.service).
  tracing = initTracing("stack", { tracesUrl: `${receiver.url}/v1/traces`, serviceName: "redline-test-stack" });
  // The in-process agent creates jobs and serves RPCs but runs none: a child agent process does.
  ({ stack, key } = await startStackWithKey({ name: "tracing", jobs: { concurrency: 0 } }, "tess"));
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await stack?.close();
  await tracing?.shutdown();
  await receiver?.close();
});

/** Flushes this process's spans until `probe` finds what it waits for in the receiver. */
async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    await tracing.flush();
    const value = probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const inTrace = (traceId: string) => receiver.spans.filter((s) => s.traceId === traceId);
/** The gateway span of the request that answered with X-Request-Id `requestId`. */
const gatewaySpanOf = (requestId: string) =>
  receiver.spans.find((s) => s.kind === KIND.server && s.attributes["redline.request_id"] === requestId);

/**
 * Every span of `spans` but the root has its parent among them; a call that succeeded has no
 * client span (TRACE_RPC_CLIENT_SPANS=errors): its server span's parent is the caller's own span.
 */
function expectConnected(spans: ReceivedSpan[], root: ReceivedSpan): void {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  for (const s of spans) {
    if (s === root) continue;
    expect(byId.has(s.parentSpanId), `parent of ${s.name}`).toBe(true);
    if (s.kind === KIND.server) expect(byId.get(s.parentSpanId)?.kind).not.toBe(KIND.client);
  }
  expect(spans.filter((s) => s.kind === KIND.client && s.statusCode !== 2).map((s) => s.name)).toEqual([]);
}

describe("one trace per chat turn", () => {
  it("a sync POST /v1/chat: gateway span → server spans of agent, documents, sessions, billing, and the outbox publish", async () => {
    await tracing.flush();
    const before = receiver.spans.length;
    const res = await stack.call("POST", "/v1/chat", {
      key,
      body: { message: 'replace "Acme Corporation" with "Globex Inc"', document_html: sampleContract() },
    });
    expect(res.status).toBe(200);
    const requestId = res.headers.get("x-request-id") ?? "";
    const root = await until("the gateway span", () => gatewaySpanOf(requestId));
    expect(root.name).toBe("POST /v1/chat");
    expect(root.parentSpanId).toBe("");
    expect(root.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.route": "/v1/chat",
      "http.response.status_code": 200,
    });
    // The document the turn created is published by the relay within this trace.
    const publish = await until("the outbox relay's publish span", () =>
      inTrace(root.traceId).find((s) => s.kind === KIND.producer),
    );
    expect(publish.name).toMatch(/^redline\.documents\.v1\.document_[a-z]+\.\{owner_id\} publish$/);
    expect(publish.attributes["messaging.system"]).toBe("nats");
    // The JetStream message carries the publish span as its traceparent, for consumers to continue.
    const nc = await connectNats(inject("infra").natsUrl, "tracing-test");
    try {
      const jsm = await nc.jetstreamManager();
      const subject = String(publish.attributes["messaging.destination.name"]);
      const stored = await jsm.streams.getMessage(DOCUMENT_EVENTS_STREAM, { last_by_subj: subject });
      expect(stored.header.get("traceparent")).toBe(`00-${root.traceId}-${publish.spanId}-01`);
    } finally {
      await nc.close();
    }

    const spans = inTrace(root.traceId);
    expectConnected(spans, root);
    // The span to continue is handed on explicitly (no context manager): a call that dropped it
    // would start a trace of its own. Nothing else ran meanwhile, so every span since is this turn's.
    const strays = receiver.spans.slice(before).filter((s) => s.traceId !== root.traceId);
    expect(strays.map((s) => `${s.service} ${s.name}`)).toEqual([]);
    const servers = spans.filter((s) => s.kind === KIND.server && s !== root);
    const services = new Set(servers.map((s) => s.attributes["rpc.service"]));
    expect(services).toContain("redline.agent.v1.AgentService");
    for (const pkg of ["documents", "sessions", "billing"]) {
      expect(
        [...services].some((s) => String(s).startsWith(`redline.${pkg}.v1.`)),
        pkg,
      ).toBe(true);
    }
    // The agent's Chat is called by the gateway: its server span is a child of the HTTP span,
    // and the agent's own calls are children of that.
    const chat = servers.find((s) => s.name === "redline.agent.v1.AgentService/Chat");
    expect(chat?.parentSpanId).toBe(root.spanId);
    expect(chat?.attributes["rpc.grpc.status_code"]).toBe(0);
    const reserve = servers.find((s) => s.name === "redline.billing.v1.BillingService/ReserveOperations");
    expect(reserve?.parentSpanId).toBe(chat?.spanId);
  });

  it("an async job run by another agent process is in the trace of the request that created it", async () => {
    const child = startAgentProcess();
    // Every job event on NATS, to check the headers the child publishes them with.
    const nc = await connectNats(inject("infra").natsUrl, "tracing-test");
    const published: { subject: string; traceparent?: string }[] = [];
    const sub = nc.subscribe("redline.jobs.v1.>", {
      callback: (_err, msg) => published.push({ subject: msg.subject, traceparent: msg.headers?.get("traceparent") }),
    });
    const created = await startJob(stack, key, {
      message: 'replace "Acme Corporation" with "Initech"',
      document_html: sampleContract(),
    });
    expect(created.status).toBe(202);
    // A progress stream open while the child agent still starts, so the events reach it live over NATS.
    const streamed = readSse(stack, `/v1/chat/${created.body.session_id}/stream?job_id=${created.body.job_id}`, {
      headers: { Authorization: `Bearer ${key}` },
      timeoutMs: 40_000,
    });
    const done = await waitForJob(stack, key, created.body.job_id, ["completed", "failed"], 40_000);
    expect(done.status).toBe("completed");
    // SIGTERM: the child's shutdown flushes its batched spans before it exits.
    child.kill("SIGTERM");
    expect(await exitOf(child)).toBe(0);
    sub.unsubscribe();
    await nc.close();

    const row = await stack.agentDb("agent.jobs").where({ id: created.body.job_id }).first();
    expect(row.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const [, traceId, parentId] = row.traceparent.split("-");
    const run = await until("the child's job run span", () =>
      receiver.spans.find((s) => s.name === "job run" && s.attributes["job.id"] === created.body.job_id),
    );
    expect(run.service).toBe("redline-agent");
    expect(run.traceId).toBe(traceId);
    expect(run.parentSpanId).toBe(parentId);
    // The stored parent is the in-process agent's server span of the creating call, under the gateway's POST.
    const spans = inTrace(traceId);
    const creator = spans.find((s) => s.spanId === parentId);
    expect(creator?.kind).toBe(KIND.server);
    expect(creator?.attributes["rpc.service"]).toBe("redline.agent.v1.JobsService");
    const root = spans.find((s) => s.parentSpanId === "");
    expect(root?.name).toBe("POST /v1/chat/async");
    // The job's own gRPC calls, made by the child, reach the in-process services in the same trace:
    // server spans here whose parents are the child's spans.
    const childSpans = new Set(spans.filter((s) => s.service === "redline-agent").map((s) => s.spanId));
    const jobCalls = spans.filter(
      (s) => s.kind === KIND.server && s.service !== "redline-agent" && childSpans.has(s.parentSpanId),
    );
    expect(jobCalls.map((s) => s.attributes["rpc.service"])).toContain("redline.documents.v1.DocumentsService");
    expectConnected(spans, root as ReceivedSpan);
    // The job's events went out inside its run, each with a traceparent of this trace.
    const events = published.filter((m) => m.subject === jobSubject(created.body.job_id));
    expect(events.length).toBeGreaterThan(0);
    for (const e of events) expect(e.traceparent?.split("-")[1]).toBe(traceId);
    // The gateway continues them: each live delivery to the stream is a consumer span in the job's trace.
    expect((await streamed).ended).toBe(true);
    const receives = await until("the stream's receive spans", () => {
      const found = inTrace(traceId).filter(
        (sp) =>
          sp.name === "redline.jobs.v1.{job_id} receive" &&
          sp.attributes["messaging.destination.name"] === jobSubject(created.body.job_id),
      );
      return found.length > 0 ? found : undefined;
    });
    const traceSpanIds = new Set(inTrace(traceId).map((sp) => sp.spanId));
    for (const r of receives) {
      expect(r.kind).toBe(KIND.consumer);
      expect(traceSpanIds.has(r.parentSpanId)).toBe(true);
    }
  });

  it("a queued job cancelled before any agent ran it publishes its events in the job's trace", async () => {
    const nc = await connectNats(inject("infra").natsUrl, "tracing-test-cancel");
    const published: { subject: string; type: string; traceparent?: string }[] = [];
    const sub = nc.subscribe("redline.jobs.v1.>", {
      callback: (_err, msg) =>
        published.push({
          subject: msg.subject,
          type: decodeJobEvent(msg.data).type,
          traceparent: msg.headers?.get("traceparent"),
        }),
    });
    try {
      // No agent process runs jobs here: the job stays queued until it is cancelled.
      const created = await startJob(stack, key, {
        message: 'replace "Acme" with "Initech"',
        document_html: sampleContract(),
      });
      expect(created.status).toBe(202);
      const cancel = await stack.call("POST", `/v1/jobs/${created.body.job_id}/cancel`, { key });
      expect(cancel.status).toBe(200);
      const row = await stack.agentDb("agent.jobs").where({ id: created.body.job_id }).first();
      expect(row.status).toBe("cancelled");
      const events = await until("the cancel's events on NATS", () => {
        const found = published.filter((m) => m.subject === jobSubject(created.body.job_id));
        return found.some((m) => m.type === "error") ? found : undefined;
      });
      for (const e of events) expect(e.traceparent).toBe(row.traceparent);
    } finally {
      sub.unsubscribe();
      await nc.close();
    }
  });

  it("continues a client's traceparent, and the request's log lines carry its trace id next to the request id", async () => {
    const { lines, sink } = logLines();
    // A second gateway over the same services, logging into `lines` instead of stdout.
    const gateway = await startGateway(
      {
        host: "127.0.0.1",
        port: 0,
        addrs: stack.addrs,
        maxRequestMb: 100,
        supportEmail: "support@redline.local",
        aiTimeoutMs: 60_000,
        authCacheTtlMs: 5000,
        logLevel: "info",
      },
      { log: createLogger("gateway", "info", sink) },
    );
    try {
      const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
      const clientSpan = "00f067aa0ba902b7";
      const res = await fetch(`${gateway.url}/v1/sessions`, {
        headers: { Authorization: `Bearer ${key}`, traceparent: `00-${traceId}-${clientSpan}-01` },
      });
      expect(res.status).toBe(200);
      const requestId = res.headers.get("x-request-id") ?? "";
      const root = await until("the gateway span", () => gatewaySpanOf(requestId));
      expect(root.traceId).toBe(traceId);
      expect(root.parentSpanId).toBe(clientSpan);
      expect(root.name).toBe("GET /v1/sessions");
      const spans = inTrace(traceId);
      expect(spans.some((s) => s.attributes["rpc.service"] === "redline.sessions.v1.SessionsService")).toBe(true);
      expectConnected(spans, root);
      await until("the access log line", () => (lines.some((l) => l.msg === "request") ? true : undefined));
      const access = lines.find((l) => l.msg === "request" && l.requestId === requestId);
      expect(access).toMatchObject({ requestId, trace_id: traceId, span_id: root.spanId, status: 200 });
    } finally {
      await gateway.close();
    }
  });
});

/** Starts services/agent/src/main.ts as a child process on the stack, exporting spans to the receiver. */
function startAgentProcess(): ChildProcess {
  const infra = inject("infra");
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
      AGENT_JOB_CONCURRENCY: "1",
      AGENT_JOB_POLL_MS: "200",
      LOG_LEVEL: "silent",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    },
  });
  children.push(child);
  return child;
}

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}
