// Tracing on with the standard OTel sampler variables: OTEL_TRACES_SAMPLER=parentbased_traceidratio
// with ratio 0 records no trace of its own, yet hands the unsampled traceparent on explicitly,
// starts no span under a sampled-out caller, and follows a caller's sampled traceparent. This file runs in its own worker, so its provider
// is the only one.
import { Metadata } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OtlpReceiver, startOtlpReceiver } from "../../../test/support/otlp-receiver.js";
import {
  initTracing,
  readTracingEnv,
  rpcClientSpan,
  startServerSpan,
  type Tracing,
  traceparentOf,
  withSpan,
} from "./tracing.js";

let tracing: Tracing;
let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  tracing = initTracing(
    "sampler-test",
    readTracingEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0",
    }),
  );
});

afterAll(async () => {
  await tracing?.shutdown();
  await receiver?.close();
});

describe("OTEL_TRACES_SAMPLER", () => {
  it("ratio 0: a new trace is not recorded, and its unsampled traceparent still reaches the next call", async () => {
    expect(tracing.enabled).toBe(true);
    const md = new Metadata();
    const seen = await withSpan("root", {}, async (span, trace) => {
      await rpcClientSpan("/redline.x.v1.X/Y", md, trace, async () => undefined);
      return { recording: span?.isRecording(), traceparent: traceparentOf(trace) };
    });
    expect(seen.recording).toBe(false);
    expect(seen.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    const sent = String(md.get("traceparent")[0]);
    // Same trace, flag 00: the next service does not record it either.
    expect(sent.split("-")[1]).toBe(seen.traceparent?.split("-")[1]);
    expect(sent.endsWith("-00")).toBe(true);
  });

  it("parent-based: a caller's sampled traceparent is recorded whatever the ratio", () => {
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const started = startServerSpan("GET /v1/sessions", { traceparent }, {});
    expect(started?.span.isRecording()).toBe(true);
    expect(started?.span.spanContext().traceId).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(traceparentOf(started?.trace)).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
    started?.span.end();
  });

  it("under a caller's sampled-out traceparent no span is started: the work continues the caller's context", async () => {
    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";
    const started = startServerSpan("POST /v1/chat", { traceparent }, {});
    expect(started?.span.isRecording()).toBe(false);
    // The caller's own span id goes on: the SDK would have made up a new one for a span recording nothing.
    expect(traceparentOf(started?.trace)).toBe(traceparent);
    const inner = await withSpan("publish", { traceparent }, async (span, trace) => ({
      recording: span?.isRecording(),
      traceparent: traceparentOf(trace),
    }));
    expect(inner).toEqual({ recording: false, traceparent });
    const md = new Metadata();
    await rpcClientSpan("/redline.x.v1.X/Y", md, started?.trace, async () => undefined);
    expect(md.get("traceparent")).toEqual([traceparent]);
  });

  it("exports only what was sampled", async () => {
    await tracing.flush();
    expect(receiver.spans.map((s) => s.name)).toEqual(["GET /v1/sessions"]);
  });
});
