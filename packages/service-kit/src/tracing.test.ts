// Tracing off (no OTLP endpoint): the helpers pass straight through, no span is ever created or
// handed on, nothing is injected into carriers and log lines carry no trace fields. This file
// runs in its own worker, so nothing else has registered a tracer provider here.
import { createRequire } from "node:module";
import { Metadata } from "@grpc/grpc-js";
import { context, trace } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { logLines } from "../../../test/support/log-lines.js";
import { createLogger } from "./logger.js";
import { natsTraceHeaders } from "./messaging.js";
import {
  initTracing,
  readTracingEnv,
  rpcClientSpan,
  rpcServerSpan,
  startServerSpan,
  traceHeaders,
  traceLogFields,
  traceparentOf,
  tracingEnabled,
  withSpan,
} from "./tracing.js";

describe("readTracingEnv", () => {
  it("follows the OTel variables: base endpoint + /v1/traces, the traces endpoint as is, OTEL_SERVICE_NAME", () => {
    expect(readTracingEnv({})).toBeUndefined();
    expect(readTracingEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: " " })).toBeUndefined();
    expect(readTracingEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })).toEqual({
      tracesUrl: "http://collector:4318/v1/traces",
      serviceName: undefined,
      rpcClientSpans: "errors",
      sampler: { name: "parentbased_always_on", ratio: 1 },
    });
    expect(
      readTracingEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://traces:9999/custom",
        OTEL_SERVICE_NAME: "redline-edge",
      }),
    ).toEqual({
      tracesUrl: "http://traces:9999/custom",
      serviceName: "redline-edge",
      rpcClientSpans: "errors",
      sampler: { name: "parentbased_always_on", ratio: 1 },
    });
  });

  it("reads OTEL_TRACES_SAMPLER and its ratio, and names either when malformed (the SDK would record every turn instead)", () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" };
    const sampler = (extra: Record<string, string>) => readTracingEnv({ ...on, ...extra })?.sampler;
    expect(sampler({ OTEL_TRACES_SAMPLER: " ParentBased_TraceIdRatio ", OTEL_TRACES_SAMPLER_ARG: "0.1" })).toEqual({
      name: "parentbased_traceidratio",
      ratio: 0.1,
    });
    expect(sampler({ OTEL_TRACES_SAMPLER: "traceidratio" })).toEqual({ name: "traceidratio", ratio: 1 });
    // The argument belongs to the ratio samplers alone, as in the SDK.
    expect(sampler({ OTEL_TRACES_SAMPLER: "always_off", OTEL_TRACES_SAMPLER_ARG: "lots" })).toEqual({
      name: "always_off",
      ratio: 1,
    });
    expect(() => sampler({ OTEL_TRACES_SAMPLER: "parentbased_traceid_ratio" })).toThrow(
      "OTEL_TRACES_SAMPLER must be one of parentbased_always_on, parentbased_always_off, parentbased_traceidratio, always_on, always_off, traceidratio; got parentbased_traceid_ratio",
    );
    for (const arg of ["1.5", "-0.1", "a tenth"])
      expect(() => sampler({ OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: arg })).toThrow(
        `OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1; got ${arg}`,
      );
    // Tracing off: the sampler is never read, so it cannot stop a service from starting.
    expect(readTracingEnv({ OTEL_TRACES_SAMPLER: "nonsense" })).toBeUndefined();
  });
});

describe("with no endpoint, tracing is a no-op", () => {
  it("records no span, activates no context and injects nothing", async () => {
    const off = initTracing("documents", undefined);
    expect(off.enabled).toBe(false);
    expect(tracingEnabled()).toBe(false);
    // The API stays the no-op one: a span started through it is not recording.
    expect(trace.getTracer("probe").startSpan("x").isRecording()).toBe(false);

    const seen = await withSpan("outer", {}, async (span, trace) => ({ span, trace }));
    expect(seen).toEqual({ span: undefined, trace: undefined });
    expect(trace.getSpan(context.active())).toBeUndefined();
    expect(startServerSpan("GET", { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" }, {})).toBe(
      undefined,
    );
    const md = new Metadata();
    const answer = await rpcClientSpan("/redline.x.v1.X/Y", md, undefined, async () =>
      rpcServerSpan("/redline.x.v1.X/Y", md, async (serverTrace) => serverTrace),
    );
    expect(answer).toBeUndefined();
    expect(md.get("traceparent")).toEqual([]);
    expect(traceparentOf(undefined)).toBeUndefined();
    expect(traceHeaders(undefined)).toEqual({});
    expect(traceLogFields(undefined)).toEqual({});
    expect(natsTraceHeaders(undefined)).toBeUndefined();
    // Nor is the SDK loaded (initTracing requires it only when tracing is on).
    const loaded = Object.keys(createRequire(import.meta.url).cache);
    expect(loaded.filter((path) => path.includes("@opentelemetry/sdk-trace"))).toEqual([]);
  });

  it("log lines carry no trace fields", async () => {
    const { lines, sink } = logLines();
    const log = createLogger("documents", "info", sink);
    await withSpan("outer", {}, async (_span, trace) =>
      log.child({ requestId: "r-1", ...traceLogFields(trace) }).info({ n: 1 }, "inside"),
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ requestId: "r-1", n: 1, msg: "inside" });
    expect(lines[0]).not.toHaveProperty("trace_id");
    expect(lines[0]).not.toHaveProperty("span_id");
  });
});
