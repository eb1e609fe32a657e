// TRACE_RPC_CLIENT_SPANS=all: every gRPC call gets the OTel RPC conventions' client span, the
// parent of its server span, through a real service-kit server and client. This file runs in its
// own worker, so its provider is the only one.
import { billingV1 } from "@redline/grpc-stubs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "./logger.js";
import { bindService, createRpcClient, type RpcClient, type RunningServer, startGrpcServer } from "./rpc.js";
import { type OtlpCollector, startOtlpCollector } from "./test-support/otlp-collector.js";
import { initTracing, readTracingEnv, type Tracing, withSpan } from "./tracing.js";

// One of billing's methods, served and called through service-kit's real server and client.
const Billing = { resolveApiKey: billingV1.BillingServiceService.resolveApiKey };
const RESOLVE = "redline.billing.v1.BillingService/ResolveApiKey";

let tracing: Tracing;
let collector: OtlpCollector;
let server: RunningServer;
let client: RpcClient<typeof Billing>;

beforeAll(async () => {
  collector = await startOtlpCollector();
  const cfg = readTracingEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://unused", TRACE_RPC_CLIENT_SPANS: "All" });
  expect(cfg?.rpcClientSpans).toBe("all");
  tracing = initTracing("rpc-spans-all-test", { ...cfg, tracesUrl: collector.tracesUrl });
  const handlers = {
    resolveApiKey: async () => billingV1.ResolveApiKeyResponse.fromPartial({}),
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

describe("gRPC client spans (TRACE_RPC_CLIENT_SPANS=all)", () => {
  it("a call that succeeded: caller span → client span → server span", async () => {
    await withSpan("caller", {}, (_span, trace) => client.resolveApiKey({ apiKey: "k" }, { trace }));
    await tracing.flush();
    const root = collector.spans.find((s) => s.name === "caller");
    const clientSpan = collector.spans.find((s) => s.kind === 3);
    const serverSpan = collector.spans.find((s) => s.kind === 2);
    expect(clientSpan).toMatchObject({ name: RESOLVE, parentSpanId: root?.spanId, traceId: root?.traceId });
    expect(serverSpan).toMatchObject({ name: RESOLVE, parentSpanId: clientSpan?.spanId, traceId: root?.traceId });
    expect(clientSpan?.attributes["rpc.grpc.status_code"]).toBe(0);
  });

  it("TRACE_RPC_CLIENT_SPANS accepts only errors or all", () => {
    expect(() => readTracingEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://x", TRACE_RPC_CLIENT_SPANS: "some" })).toThrow(
      /TRACE_RPC_CLIENT_SPANS must be errors or all; got some/,
    );
  });
});
