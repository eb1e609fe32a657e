// TRACE_RPC_CLIENT_SPANS=all: every gRPC call gets the OTel RPC conventions' client span, the
// parent of its server span, through a real service-kit server and client. This file runs in its
// own worker, so its provider is the only one.
import { billingV1 } from "@redline/grpc-stubs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RESOLVE, startTracedBilling, type TracedBilling } from "./test-support/traced-billing.js";
import { readTracingEnv, withSpan } from "./tracing.js";

let traced: TracedBilling;

beforeAll(async () => {
  const env = { TRACE_RPC_CLIENT_SPANS: "All" };
  expect(readTracingEnv({ ...env, OTEL_EXPORTER_OTLP_ENDPOINT: "http://unused" })?.rpcClientSpans).toBe("all");
  traced = await startTracedBilling("rpc-spans-all-test", env, async () => billingV1.GetUsageResponse.fromPartial({}));
});
afterAll(() => traced?.close());

describe("gRPC client spans (TRACE_RPC_CLIENT_SPANS=all)", () => {
  it("a call that succeeded: caller span → client span → server span", async () => {
    await withSpan("caller", {}, (_span, trace) => traced.client.resolveApiKey({ apiKey: "k" }, { trace }));
    await traced.tracing.flush();
    const root = traced.receiver.spans.find((s) => s.name === "caller");
    const clientSpan = traced.receiver.spans.find((s) => s.kind === 3);
    const serverSpan = traced.receiver.spans.find((s) => s.kind === 2);
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
