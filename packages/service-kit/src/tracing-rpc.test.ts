// gRPC client spans with tracing on and TRACE_RPC_CLIENT_SPANS unset (errors): through a real
// service-kit server and client, a call that succeeded is only its server span, a child of the
// caller's span; a call that failed, answered by a handler or never answered at all, also gets a
// client span with the error and the gRPC code. This file runs in its own worker, so its provider
// is the only one.
import { billingV1 } from "@redline/grpc-stubs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotFoundError } from "./errors.js";
import { createLogger } from "./logger.js";
import { bindService, createRpcClient, type RpcClient, type RunningServer, startGrpcServer } from "./rpc.js";
import { type OtlpCollector, startOtlpCollector } from "./test-support/otlp-collector.js";
import { initTracing, readTracingEnv, setTracingRecording, type Tracing, tracingEnabled, withSpan } from "./tracing.js";

// Two of billing's methods, served and called through service-kit's real server and client.
const Billing = {
  resolveApiKey: billingV1.BillingServiceService.resolveApiKey,
  getUsage: billingV1.BillingServiceService.getUsage,
};
const RESOLVE = "redline.billing.v1.BillingService/ResolveApiKey";
const USAGE = "redline.billing.v1.BillingService/GetUsage";
const SERVER = 2;
const CLIENT = 3;

let tracing: Tracing;
let collector: OtlpCollector;
let server: RunningServer;
let client: RpcClient<typeof Billing>;

beforeAll(async () => {
  collector = await startOtlpCollector();
  const cfg = readTracingEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: collector.tracesUrl });
  expect(cfg?.rpcClientSpans).toBe("errors");
  tracing = initTracing("rpc-spans-test", cfg);
  const handlers = {
    resolveApiKey: async () => billingV1.ResolveApiKeyResponse.fromPartial({}),
    getUsage: async () => {
      throw new NotFoundError("no such account");
    },
  };
  server = await startGrpcServer("127.0.0.1:0", [bindService(Billing, handlers)], createLogger("test", "silent"));
  client = createRpcClient(Billing, server.address);
});

afterAll(async () => {
  client?.close();
  await server?.close(100);
  await tracing?.shutdown();
  await collector?.close();
});

/** The spans of the trace `root` belongs to, once exported. */
async function traceOf(rootName: string) {
  await tracing.flush();
  const root = collector.spans.find((s) => s.name === rootName);
  if (!root) throw new Error(`no span ${rootName}`);
  return { root, spans: collector.spans.filter((s) => s.traceId === root.traceId && s !== root) };
}

describe("gRPC client spans (TRACE_RPC_CLIENT_SPANS=errors)", () => {
  it("a call that succeeded: its server span is the caller span's child, and there is no client span", async () => {
    await withSpan("ok caller", {}, (_span, trace) => client.resolveApiKey({ apiKey: "k" }, { trace }));
    const { root, spans } = await traceOf("ok caller");
    expect(spans.map((s) => [s.name, s.kind, s.parentSpanId])).toEqual([[RESOLVE, SERVER, root.spanId]]);
    expect(spans[0].attributes["rpc.grpc.status_code"]).toBe(0);
  });

  it("a call a handler failed: a client span with its code, beside the server span", async () => {
    await expect(
      withSpan("failing caller", {}, (_span, trace) => client.getUsage({}, { trace })),
    ).rejects.toMatchObject({ httpStatus: 404 });
    const { root, spans } = await traceOf("failing caller");
    const clientSpan = spans.find((s) => s.kind === CLIENT);
    const serverSpan = spans.find((s) => s.kind === SERVER);
    expect(clientSpan).toMatchObject({ name: USAGE, parentSpanId: root.spanId, statusCode: 2 });
    expect(clientSpan?.attributes["rpc.grpc.status_code"]).toBe(5);
    expect(serverSpan).toMatchObject({ name: USAGE, parentSpanId: root.spanId, statusCode: 2 });
  });

  it("setTracingRecording(false) makes every helper pass through, as tracing off; true resumes", async () => {
    await tracing.flush();
    const exported = collector.spans.length;
    try {
      setTracingRecording(false);
      expect(tracingEnabled()).toBe(false);
      const seen = await withSpan("paused caller", {}, async (span, trace) => {
        await client.resolveApiKey({ apiKey: "k" }, { trace });
        return { span, trace };
      });
      expect(seen).toEqual({ span: undefined, trace: undefined });
      await tracing.flush();
      expect(collector.spans.length).toBe(exported);
    } finally {
      setTracingRecording(true);
    }
    expect(tracingEnabled()).toBe(true);
    await withSpan("resumed caller", {}, (_span, trace) => client.resolveApiKey({ apiKey: "k" }, { trace }));
    const { spans } = await traceOf("resumed caller");
    expect(spans.map((s) => s.name)).toEqual([RESOLVE]);
  });

  it("a call no server answered: a client span over its retries, with UNAVAILABLE", async () => {
    // A port nothing listens on: the client retries three times (100, 300, 900 ms) and gives up.
    const closed = await startGrpcServer("127.0.0.1:0", [], createLogger("test", "silent"));
    await closed.close(0);
    const gone = createRpcClient(Billing, closed.address);
    try {
      await expect(
        withSpan("unanswered caller", {}, (_span, trace) => gone.resolveApiKey({ apiKey: "k" }, { trace })),
      ).rejects.toMatchObject({ httpStatus: 503 });
    } finally {
      gone.close();
    }
    const { root, spans } = await traceOf("unanswered caller");
    expect(spans.map((s) => [s.name, s.kind, s.parentSpanId, s.statusCode])).toEqual([
      [RESOLVE, CLIENT, root.spanId, 2],
    ]);
    expect(spans[0].attributes["rpc.grpc.status_code"]).toBe(14);
    expect(spans[0].durationMs).toBeGreaterThanOrEqual(1300);
  });
});
