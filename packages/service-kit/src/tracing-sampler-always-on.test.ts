// Tracing on with OTEL_TRACES_SAMPLER=always_on, a sampler that decides span by span: a span
// under a caller's sampled-out traceparent is still started and recorded, as the SDK samples it,
// so the shortcut for sampled-out parents stays off. This file runs in its own worker, so its
// provider is the only one.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OtlpReceiver, startOtlpReceiver } from "../../../test/support/otlp-receiver.js";
import { initTracing, readTracingEnv, startServerSpan, type Tracing, traceparentOf } from "./tracing.js";

let tracing: Tracing;
let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  tracing = initTracing(
    "sampler-always-on-test",
    readTracingEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: "always_on" }),
  );
});

afterAll(async () => {
  await tracing?.shutdown();
  await receiver?.close();
});

describe("OTEL_TRACES_SAMPLER=always_on", () => {
  it("records a span under a sampled-out caller, a child of the caller's span", async () => {
    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";
    const started = startServerSpan("POST /v1/chat", { traceparent }, {});
    expect(started?.span.isRecording()).toBe(true);
    expect(traceparentOf(started?.trace)).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
    started?.span.end();
    await tracing.flush();
    expect(receiver.spans.map((s) => [s.name, s.traceId, s.parentSpanId])).toEqual([
      ["POST /v1/chat", "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"],
    ]);
  });
});
