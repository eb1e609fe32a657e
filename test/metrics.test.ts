// Metrics end to end on the stack as `pnpm start` runs it (separate processes): some traffic (a
// chat turn with an upload, an async job, an export, a 404, health and readiness), then every
// service's GET /metrics, found in stack.json, is scraped and the series checked: they exist,
// counts went up, histograms have buckets, no label value looks like an id, and the metrics port
// is never the API port.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { accountsV1 } from "@redline/grpc-stubs";
import { createTestDatabase, infraEnv } from "@redline/local-infra";
import {
  freeStackEnv,
  type RunningStack,
  readStackFile,
  SERVICE_NAMES,
  type ServiceName,
  startStack,
} from "@redline/local-stack";
import { createRpcClient } from "@redline/service-kit";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { sampleContract } from "./support/fixtures.js";

const infra = inject("infra");
const dataDir = mkdtempSync(join(os.tmpdir(), "redline-metrics-"));
chmodSync(dataDir, 0o755);
let stack: RunningStack | undefined;
let key = "";
const stackLog: string[] = [];

/** One sample of the Prometheus text format. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (comments skipped). */
function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

async function scrape(name: ServiceName): Promise<Sample[]> {
  const addr = readStackFile(dataDir)?.metrics[name];
  if (!addr) throw new Error(`stack.json lists no metrics address for ${name}`);
  const res = await fetch(`http://${addr}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/plain");
  return parseMetrics(await res.text());
}

const series = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
const total = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  series(samples, name, labels).reduce((sum, s) => sum + s.value, 0);

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${stack?.gatewayUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, ...(body !== undefined && { "Content-Type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {
    // Export bodies are files.
  }
  return { status: res.status, json };
}

beforeAll(async () => {
  const databaseUrl = await createTestDatabase(infra.databaseUrl, "metrics_stack");
  stack = await startStack({
    dataDir,
    env: {
      ...process.env,
      ...infraEnv({ ...infra, databaseUrl }),
      ...(await freeStackEnv()),
      LOG_LEVEL: "warn",
      OPENAI_BASE_URL: "",
      OPENAI_API_KEY: "",
      METRICS_ADDR: "",
    },
    log: (line) => stackLog.push(line),
    healthTimeoutMs: 120_000,
  }).catch((err: Error) => {
    throw new Error(`${err.message}\n${stackLog.slice(-40).join("\n")}`);
  });
  const accounts = createRpcClient(accountsV1.AccountsServiceService, stack.addrs.billing);
  ({ apiKey: key } = await accounts.createApiKey({ user: "metrics", organization: "", plan: "pro" }));
  accounts.close();

  // The traffic the metrics must reflect.
  const turn = await call("POST", "/v1/chat", {
    message: 'replace "alpha" with "omega"',
    upload_document_base64: {
      filename: "notes.md",
      file_base64: Buffer.from("# Notes\n\nThe alpha release.\n").toString("base64"),
    },
  });
  expect(turn.status).toBe(200);
  const job = await call("POST", "/v1/chat/async", {
    message: 'replace "Acme Corporation" with "Globex Inc"',
    document_html: sampleContract(),
  });
  expect(job.status).toBe(202);
  const jobId = (job.json as { job_id: string }).job_id;
  for (let i = 0; ; i++) {
    const got = await call("GET", `/v1/jobs/${jobId}`);
    if ((got.json as { status: string }).status === "completed") break;
    if (i > 300) throw new Error(`job not completed: ${JSON.stringify(got.json)}`);
    await sleep(100);
  }
  const exported = await call("POST", "/v1/documents/export", { html: "<p>Hello</p>", format: "txt" });
  expect(exported.status).toBe(200);
  expect((await call("GET", "/v1/no-such-route")).status).toBe(404);
  expect((await call("GET", "/health")).status).toBe(200);
  expect((await call("GET", "/ready")).status).toBe(200);
}, 600_000);

afterAll(async () => {
  await stack?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** UUIDs, long hex or numeric ids, API keys: none may appear as a label value. */
const ID_LIKE =
  /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{16,}|\d{6,}|sk_[0-9a-f]|[a-z]+_[0-9a-z]{10,}/i;

describe("metrics", () => {
  it("lists every service's metrics address in stack.json, none of them an API port", () => {
    const info = readStackFile(dataDir);
    expect(Object.keys(info?.metrics ?? {}).sort()).toEqual([...SERVICE_NAMES].sort());
    const apiPorts = new Set(Object.values(info?.addrs ?? {}).map((a) => a.split(":").pop()));
    for (const name of SERVICE_NAMES) {
      const port = info?.metrics[name]?.split(":").pop();
      expect(port, name).toMatch(/^\d+$/);
      expect(apiPorts.has(port), `${name} metrics on an API port`).toBe(false);
    }
  });

  it("the API port does not serve /metrics", async () => {
    expect((await fetch(`${stack?.gatewayUrl}/metrics`)).status).toBe(404);
  });

  it("every service: runtime metrics, per-RPC counts and latency, and no id-like label value", async () => {
    for (const name of SERVICE_NAMES) {
      const samples = await scrape(name);
      expect(total(samples, "redline_process_resident_memory_bytes"), name).toBeGreaterThan(10 * 1024 * 1024);
      expect(series(samples, "redline_nodejs_eventloop_lag_seconds").length, name).toBe(1);
      for (const s of samples) {
        for (const [label, value] of Object.entries(s.labels)) {
          expect(ID_LIKE.test(value), `${name}: ${s.name}{${label}="${value}"}`).toBe(false);
        }
      }
      if (name === "gateway") continue;
      // Every backend answered the gateway's readiness check at least.
      const handled = series(samples, "redline_grpc_server_handled_total", { grpc_method: "Check", grpc_code: "OK" });
      expect(handled.length, name).toBe(1);
      expect(handled[0].value, name).toBeGreaterThan(0);
      expect(
        series(samples, "redline_grpc_server_handling_seconds_bucket", { le: "+Inf" }).length,
        name,
      ).toBeGreaterThan(0);
    }
  });

  it("backends with Postgres report their pool", async () => {
    for (const name of ["documents", "sessions", "billing", "agent", "ingest"] as const) {
      const samples = await scrape(name);
      expect(series(samples, "redline_db_pool_max_connections").length, name).toBeGreaterThan(0);
      expect(series(samples, "redline_db_pool_connections", { state: "free" }).length, name).toBeGreaterThan(0);
      expect(series(samples, "redline_db_pool_pending_acquires").length, name).toBeGreaterThan(0);
    }
  });

  it("gateway: requests by route template and status, latency buckets, 429s by cause", async () => {
    const samples = await scrape("gateway");
    const chat = { method: "POST", route: "/v1/chat" };
    expect(total(samples, "redline_http_requests_total", { ...chat, code: "200" })).toBeGreaterThanOrEqual(1);
    expect(
      total(samples, "redline_http_requests_total", { method: "GET", route: "/v1/jobs/{job_id}" }),
    ).toBeGreaterThan(0);
    expect(total(samples, "redline_http_requests_total", { route: "unmatched", code: "404" })).toBeGreaterThanOrEqual(
      1,
    );
    const buckets = series(samples, "redline_http_request_duration_seconds_bucket", chat);
    expect(buckets.length).toBeGreaterThan(5);
    expect(buckets.find((b) => b.labels.le === "+Inf")?.value).toBeGreaterThanOrEqual(1);
    expect(total(samples, "redline_http_request_duration_seconds_sum", chat)).toBeGreaterThan(0);
    const routes = new Set(series(samples, "redline_http_requests_total").map((s) => s.labels.route));
    for (const route of routes) expect(route).toMatch(/^(unmatched|\/[a-z0-9_/{}.-]*)$/);
    const text = await (await fetch(`http://${readStackFile(dataDir)?.metrics.gateway}/metrics`)).text();
    expect(text).toContain("# TYPE redline_http_throttled_total counter");
  });

  it("agent: job outcomes, queue depth, the oldest runnable job's age and the record outbox", async () => {
    const samples = await scrape("agent");
    expect(total(samples, "redline_jobs_completed_total", { status: "completed" })).toBeGreaterThanOrEqual(1);
    expect(series(samples, "redline_jobs_queue_depth")).toHaveLength(1);
    expect(total(samples, "redline_jobs_queue_depth")).toBeGreaterThanOrEqual(0);
    expect(series(samples, "redline_jobs_oldest_runnable_age_seconds")).toHaveLength(1);
    expect(total(samples, "redline_jobs_oldest_runnable_age_seconds")).toBeGreaterThanOrEqual(0);
    // Every turn here was recorded in time: nothing owed.
    expect(series(samples, "redline_turn_records_owed")).toHaveLength(1);
    expect(total(samples, "redline_turn_records_owed")).toBe(0);
    expect(total(samples, "redline_turn_records_oldest_age_seconds")).toBe(0);
  });

  it("documents: outbox lag; billing: reservations; ingest: conversion and export durations", async () => {
    const documents = await scrape("documents");
    expect(series(documents, "redline_outbox_lag_seconds")).toHaveLength(1);
    expect(total(documents, "redline_outbox_lag_seconds")).toBeLessThan(60);

    const billing = await scrape("billing");
    expect(total(billing, "redline_billing_reservations_total", { result: "reserved" })).toBeGreaterThanOrEqual(2);

    const ingest = await scrape("ingest");
    expect(total(ingest, "redline_ingest_conversion_duration_seconds_count", { format: "md", result: "ok" })).toBe(1);
    expect(total(ingest, "redline_ingest_export_duration_seconds_count", { format: "txt", result: "ok" })).toBe(1);
    expect(series(ingest, "redline_ingest_export_duration_seconds_bucket", { format: "txt" }).length).toBeGreaterThan(
      5,
    );
  });
});
